# arraydispatch: only _2025_12 is vendored (upstream imports every version here).
