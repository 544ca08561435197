// cudasim_runtime.cpp: runs a CUDA grid on the CPU, one block at a time, each CUDA thread
// a fiber (see cudasim.h for the model).  Compiled into every harness library; the
// generated trampolines (tests/cudasim/_build.py) call adsim::run_grid.
//
// Fibers: a stack per CUDA thread (mmap'd once, a guard page below each) and a context
// switch of a few instructions on x86-64 (the callee-saved registers: kernels never change
// the floating-point control state, so MXCSR and the x87 control word are not switched),
// ucontext elsewhere.  The scheduler runs the block in rounds: each round
// visits the threads in an order (forward, reverse, or a seeded shuffle per round) and
// runs each runnable one until it waits (barrier, shuffle, atomic) or exits.  A round in
// which nothing can run with threads left is a deadlock, reported with what each waits on.
// A fault (SIGSEGV/SIGBUS) during a launch is caught and reported as an error.
#include "cudasim_launch.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

// The assembly switch on x86-64; ucontext elsewhere (or with -DADSIM_UCONTEXT, to test it).
#if defined(__x86_64__) && !defined(ADSIM_UCONTEXT)
#define ADSIM_ASM_SWITCH 1
#else
#define ADSIM_ASM_SWITCH 0
#include <ucontext.h>
#endif

namespace adsim {

ThreadState* current_thread = nullptr;
BlockState current_block{};

namespace {

constexpr size_t kStack = 256 * 1024;
constexpr unsigned kMaxThreads = 1024;

enum class Wait : unsigned char { None, Barrier, Warp, Done };

struct Fiber {
    ThreadState state;
    void* sp;  // saved stack pointer (x86-64) while switched out
#if !ADSIM_ASM_SWITCH
    ucontext_t ctx;
#endif
    char* stack;
    unsigned tid;
    Wait wait;
    const char* file;
    int line;
};

struct WarpSync {
    unsigned arrived, mask;
    int mode, size;
    const char* file;
    int line;
    unsigned long long values[32], results[32];
};

struct Scheduler {
    std::vector<Fiber> fibers;
    std::vector<WarpSync> warps;
    unsigned nthreads = 0, live = 0, barrier_arrived = 0;
    const char* barrier_file = nullptr;
    int barrier_line = 0;
    Fiber* running = nullptr;
    void* sched_sp = nullptr;
#if !ADSIM_ASM_SWITCH
    ucontext_t sched_ctx;
#endif
    bool failed = false;
    std::string error;
    void (*body)(void*) = nullptr;
    void* ctx = nullptr;
    char* stacks = nullptr;
    size_t stacks_len = 0;
};

Scheduler S;
pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;

// The library's __shared__ variables (found by the build in the symbol table).
struct SharedRegion {
    void* address;
    size_t size;
};
std::vector<SharedRegion> shared_regions;

// -- context switch -----------------------------------------------------------------------
#if ADSIM_ASM_SWITCH
extern "C" void adsim_switch(void** save_sp, void* load_sp);
extern "C" void adsim_fiber_entry();
asm(R"(
    .text
    .p2align 4
    .type adsim_switch, @function
adsim_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size adsim_switch, .-adsim_switch
    .p2align 4
    .type adsim_fiber_entry, @function
adsim_fiber_entry:
    call adsim_fiber_main
    ud2
    .size adsim_fiber_entry, .-adsim_fiber_entry
)");
#endif

void to_scheduler(Fiber* f) {
#if ADSIM_ASM_SWITCH
    adsim_switch(&f->sp, S.sched_sp);
#else
    swapcontext(&f->ctx, &S.sched_ctx);
#endif
}

void run_fiber(Fiber* f) {
    S.running = f;
    current_thread = &f->state;
#if ADSIM_ASM_SWITCH
    adsim_switch(&S.sched_sp, f->sp);
#else
    swapcontext(&S.sched_ctx, &f->ctx);
#endif
    S.running = nullptr;
}

void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char* fmt, ...) {
    if (S.failed) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    S.failed = true;
    S.error = buf;
}

std::string where(const Fiber& f) {
    char buf[160];
    snprintf(buf, sizeof buf, "thread (%u,%u,%u) of block (%u,%u,%u)", f.state.idx.x,
             f.state.idx.y, f.state.idx.z, current_block.block_idx.x, current_block.block_idx.y,
             current_block.block_idx.z);
    return buf;
}

const char* base(const char* path) {
    const char* slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

// A failed fiber never runs again: hand control back for good.
[[noreturn]] void abandon(Fiber* f) {
    to_scheduler(f);
    __builtin_trap();  // unreachable: the scheduler drops failed blocks
}

void release_barrier() {
    for (Fiber& g : S.fibers) {
        if (g.wait == Wait::Barrier) g.wait = Wait::None;
    }
    S.barrier_arrived = 0;
}

}  // namespace

extern "C" __attribute__((used)) void adsim_fiber_main() {
    Fiber* f = S.running;
    S.body(S.ctx);
    f->wait = Wait::Done;
    --S.live;
    // Exited threads count as arrived at a barrier (as on the GPU since Volta).
    if (S.barrier_arrived && S.barrier_arrived == S.live) release_barrier();
    abandon(f);
}

// -- what kernels call ----------------------------------------------------------------------
void yield() {
    Fiber* f = S.running;
    to_scheduler(f);
    if (S.failed) abandon(f);
}

void syncthreads(const char* file, int line) {
    Fiber* f = S.running;
    if (S.barrier_arrived == 0) {
        S.barrier_file = file;
        S.barrier_line = line;
    } else if (S.barrier_line != line || strcmp(S.barrier_file, file) != 0) {
        fail("divergent __syncthreads(): %s waits at %s:%d while other threads of its block "
             "wait at %s:%d",
             where(*f).c_str(), base(file), line, base(S.barrier_file), S.barrier_line);
        abandon(f);
    }
    f->wait = Wait::Barrier;
    f->file = file;
    f->line = line;
    if (++S.barrier_arrived == S.live) release_barrier();
    to_scheduler(f);
    if (S.failed) abandon(f);
}

namespace {

const char* const kModes[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                              "__shfl_xor_sync", "__syncwarp"};

unsigned warp_lanes(unsigned warp) {
    const unsigned first = warp * 32;
    const unsigned n = S.nthreads - first < 32 ? S.nthreads - first : 32;
    return n == 32 ? 0xffffffffu : ((1u << n) - 1u);
}

// The lane whose value lane l reads (-1: its own), per CUDA's rules for each mode.
int source_lane(int mode, unsigned l, int arg, int width) {
    const unsigned seg = l & ~static_cast<unsigned>(width - 1);
    const unsigned pos = l & static_cast<unsigned>(width - 1);
    switch (mode) {
        case 0: return static_cast<int>(seg + (static_cast<unsigned>(arg) & (width - 1)));
        case 1: return pos < static_cast<unsigned>(arg) ? -1 : static_cast<int>(l - arg);
        case 2: return pos + arg >= static_cast<unsigned>(width) ? -1 : static_cast<int>(l + arg);
        default: {
            const unsigned src = l ^ static_cast<unsigned>(arg);
            return src >= seg + width ? -1 : static_cast<int>(src);
        }
    }
}

// A rendezvous of the lanes in `mask` of the caller's warp (mode 4: __syncwarp).
unsigned long long warp_rendezvous(unsigned mask, unsigned long long bits, int size, int mode,
                                   int arg, int width, const char* file, int line) {
    Fiber* f = S.running;
    const unsigned lane = f->tid & 31, warp = f->tid >> 5;
    if (!(mask >> lane & 1u)) {
        fail("%s at %s:%d: %s (lane %u) is not in its mask 0x%08x", kModes[mode], base(file),
             line, where(*f).c_str(), lane, mask);
        abandon(f);
    }
    if (mask & ~warp_lanes(warp)) {
        fail("%s at %s:%d: mask 0x%08x names lanes that do not exist (the block has %u "
             "threads)", kModes[mode], base(file), line, mask, S.nthreads);
        abandon(f);
    }
    if (width < 1 || width > 32 || (width & (width - 1))) {
        fail("%s at %s:%d: width %d is not a power of two up to 32", kModes[mode], base(file),
             line, width);
        abandon(f);
    }
    WarpSync& w = S.warps[warp];
    if (w.arrived == 0) {
        w.mask = mask;
        w.mode = mode;
        w.size = size;
        w.file = file;
        w.line = line;
    } else if (w.mask != mask || w.mode != mode || w.size != size) {
        fail("%s at %s:%d (mask 0x%08x) meets %s at %s:%d (mask 0x%08x) in warp %u of block "
             "(%u,%u,%u): lanes of a warp must call the same intrinsic with the same mask",
             kModes[mode], base(file), line, mask, kModes[w.mode], base(w.file), w.line,
             w.mask, warp, current_block.block_idx.x, current_block.block_idx.y,
             current_block.block_idx.z);
        abandon(f);
    }
    w.values[lane] = bits;
    w.arrived |= 1u << lane;
    f->wait = Wait::Warp;
    f->file = file;
    f->line = line;
    if (w.arrived == w.mask) {
        for (unsigned l = 0; l < 32; ++l) {
            if (!(mask >> l & 1u)) continue;
            if (mode < 4) {
                const int src = source_lane(mode, l, arg, width);
                if (src >= 0 && !(mask >> src & 1u)) {
                    fail("%s at %s:%d: lane %u reads lane %d, which is not in the mask "
                         "0x%08x (undefined on the GPU)", kModes[mode], base(file), line, l,
                         src, mask);
                    abandon(f);
                }
                w.results[l] = w.values[src < 0 ? l : static_cast<unsigned>(src)];
            }
            S.fibers[warp * 32 + l].wait = Wait::None;
        }
        w.arrived = 0;
    }
    to_scheduler(f);
    if (S.failed) abandon(f);
    return w.results[lane];
}

}  // namespace

unsigned long long shuffle(unsigned mask, unsigned long long bits, int size, int mode, int arg,
                           int width, const char* file, int line) {
    return warp_rendezvous(mask, bits, size, mode, arg, width, file, line);
}

void syncwarp(const char* file, int line, unsigned mask) {
    warp_rendezvous(mask, 0, 0, 4, 0, 32, file, line);
}

void trap(const char* what) {
    Fiber* f = S.running;
    fail("%s in %s", what, where(*f).c_str());
    abandon(f);
}

// -- faults -----------------------------------------------------------------------------------
namespace {

sigjmp_buf fault_jump;
void* volatile fault_address = nullptr;
pthread_t launch_thread;
struct sigaction old_segv, old_bus;
char alt_stack[64 * 1024];

void on_fault(int sig, siginfo_t* info, void*) {
    if (!pthread_equal(pthread_self(), launch_thread)) {
        // Not ours: put the previous handler back; the faulting instruction reruns.
        sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, nullptr);
        return;
    }
    fault_address = info->si_addr;
    siglongjmp(fault_jump, sig);
}

bool ensure_stacks(unsigned n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t need = static_cast<size_t>(n) * (kStack + page);
    if (S.stacks_len >= need) return true;
    if (S.stacks) munmap(S.stacks, S.stacks_len);
    void* p = mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        S.stacks = nullptr;
        S.stacks_len = 0;
        return false;
    }
    S.stacks = static_cast<char*>(p);
    S.stacks_len = need;
    for (unsigned i = 0; i < n; ++i) {  // a guard page below each stack: overflows fault
        mprotect(S.stacks + i * (kStack + page), page, PROT_NONE);
    }
    return true;
}

void start_fiber(Fiber& f, unsigned i) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    f.stack = S.stacks + i * (kStack + page) + page;
#if ADSIM_ASM_SWITCH
    // The frame adsim_switch pops: r15..r12, rbx, rbp, then the return address
    // (adsim_fiber_entry, which calls adsim_fiber_main: the fiber is S.running); rsp is
    // then 16-byte aligned.  The tops are staggered by 64-byte lines: stacks a page
    // multiple apart would all map their hot lines to one cache set.
    unsigned long long* top =
        reinterpret_cast<unsigned long long*>(f.stack + kStack - (i % 61) * 64);
    unsigned long long* sp = top - 9;
    for (int r = 0; r < 6; ++r) sp[r] = 0;  // r15, r14, r13, r12, rbx, rbp
    sp[6] = reinterpret_cast<unsigned long long>(&adsim_fiber_entry);
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, &adsim_fiber_main, 0);
#endif
    f.wait = Wait::None;
    f.file = nullptr;
    f.line = 0;
}

std::string describe_deadlock() {
    std::string out = "deadlock in block (" + std::to_string(current_block.block_idx.x) + "," +
                      std::to_string(current_block.block_idx.y) + "," +
                      std::to_string(current_block.block_idx.z) + "): ";
    int shown = 0;
    for (const Fiber& f : S.fibers) {
        if (f.wait == Wait::Done || shown >= 4) continue;
        char buf[200];
        snprintf(buf, sizeof buf, "%sthread %u waits at %s %s:%d", shown ? "; " : "", f.tid,
                 f.wait == Wait::Barrier ? "__syncthreads()" : "a warp intrinsic",
                 f.file ? base(f.file) : "?", f.line);
        out += buf;
        ++shown;
    }
    unsigned done = 0;
    for (const Fiber& f : S.fibers) done += f.wait == Wait::Done;
    out += " (" + std::to_string(done) + " of " + std::to_string(S.nthreads) +
           " threads exited: a barrier or shuffle that not every thread reaches)";
    return out;
}

// Runs the current block to completion; false on failure (S.error says why).
bool run_block(int order, std::mt19937_64& rng, std::vector<unsigned>& perm) {
    for (const SharedRegion& r : shared_regions) memset(r.address, 0xff, r.size);
    const unsigned bx = current_block.block_dim.x, by = current_block.block_dim.y;
    for (unsigned i = 0; i < S.nthreads; ++i) {
        Fiber& f = S.fibers[i];
        f.tid = i;
        f.state.idx = Index3{i % bx, (i / bx) % by, i / (bx * by)};
        start_fiber(f, i);
    }
    for (WarpSync& w : S.warps) w.arrived = 0;
    S.live = S.nthreads;
    S.barrier_arrived = 0;
    while (S.live) {
        if (order == 2) std::shuffle(perm.begin(), perm.end(), rng);
        bool progressed = false;
        for (unsigned k = 0; k < S.nthreads; ++k) {
            const unsigned i = order == 1 ? S.nthreads - 1 - k : perm[k];
            Fiber& f = S.fibers[i];
            if (f.wait != Wait::None) continue;
            run_fiber(&f);
            progressed = true;
            if (S.failed) return false;
        }
        if (!progressed) {
            fail("%s", describe_deadlock().c_str());
            return false;
        }
    }
    return true;
}

}  // namespace

int run_grid(const Config* c, void (*body)(void*), void* ctx, char* err, int errlen) {
    pthread_mutex_lock(&launch_lock);
    S.failed = false;
    S.error.clear();
    const unsigned long long threads =
        static_cast<unsigned long long>(c->block[0]) * c->block[1] * c->block[2];
    if (!c->grid[0] || !c->grid[1] || !c->grid[2] || !threads || threads > kMaxThreads ||
        c->block[0] > 1024 || c->block[1] > 1024 || c->block[2] > 64 || c->grid[1] > 65535 ||
        c->grid[2] > 65535 || c->grid[0] > 2147483647u) {
        fail("invalid launch configuration: grid (%u,%u,%u), block (%u,%u,%u) (CUDA allows "
             "at most 1024 threads a block, block.z <= 64, grid.y and grid.z <= 65535)",
             c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2]);
    } else if (!ensure_stacks(static_cast<unsigned>(threads))) {
        fail("could not map %llu fiber stacks", threads);
    }
    if (S.failed) {
        snprintf(err, static_cast<size_t>(errlen), "%s", S.error.c_str());
        pthread_mutex_unlock(&launch_lock);
        return 1;
    }
    S.nthreads = static_cast<unsigned>(threads);
    S.fibers.assign(S.nthreads, Fiber{});
    S.warps.assign((S.nthreads + 31) / 32, WarpSync{});
    S.body = body;
    S.ctx = ctx;
    std::vector<unsigned> perm(S.nthreads);
    for (unsigned i = 0; i < S.nthreads; ++i) perm[i] = i;
    std::mt19937_64 rng(c->seed);
    current_block.grid_dim = Index3{c->grid[0], c->grid[1], c->grid[2]};
    current_block.block_dim = Index3{c->block[0], c->block[1], c->block[2]};

    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_fault;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&act.sa_mask);
    stack_t alt, old_alt;
    alt.ss_sp = alt_stack;
    alt.ss_size = sizeof alt_stack;
    alt.ss_flags = 0;
    launch_thread = pthread_self();
    sigaltstack(&alt, &old_alt);
    sigaction(SIGSEGV, &act, &old_segv);
    sigaction(SIGBUS, &act, &old_bus);
    if (const int sig = sigsetjmp(fault_jump, 1)) {
        const Fiber* f = S.running;
        char buf[400];
        snprintf(buf, sizeof buf,
                 "%s at address %p in %s: the kernel read or wrote memory outside every "
                 "array it was given (or overflowed a thread's stack)",
                 sig == SIGSEGV ? "segmentation fault" : "bus error", fault_address,
                 f ? where(*f).c_str() : "the launcher");
        S.failed = true;
        S.error = buf;
        S.running = nullptr;
    } else {
        for (unsigned z = 0; z < c->grid[2] && !S.failed; ++z) {
            for (unsigned y = 0; y < c->grid[1] && !S.failed; ++y) {
                for (unsigned x = 0; x < c->grid[0] && !S.failed; ++x) {
                    current_block.block_idx = Index3{x, y, z};
                    if (!run_block(c->order, rng, perm)) break;
                }
            }
        }
    }
    sigaction(SIGSEGV, &old_segv, nullptr);
    sigaction(SIGBUS, &old_bus, nullptr);
    sigaltstack(&old_alt, nullptr);
    current_thread = nullptr;
    const int rc = S.failed ? 1 : 0;
    if (rc) snprintf(err, static_cast<size_t>(errlen), "%s", S.error.c_str());
    pthread_mutex_unlock(&launch_lock);
    return rc;
}

}  // namespace adsim

// The __shared__ variables of this library, given once after loading it.
ADSIM_EXPORT void adsim_set_shared(void* const* addresses, const size_t* sizes, int n) {
    pthread_mutex_lock(&adsim::launch_lock);
    adsim::shared_regions.clear();
    for (int i = 0; i < n; ++i) adsim::shared_regions.push_back({addresses[i], sizes[i]});
    pthread_mutex_unlock(&adsim::launch_lock);
}
