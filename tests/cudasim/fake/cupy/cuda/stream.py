"""``cupy.cuda.stream`` of the cudasim stand-in."""

from tests.cudasim._device import Event, Stream, get_current_stream, get_elapsed_time

__all__ = ["Event", "Stream", "get_current_stream", "get_elapsed_time"]
