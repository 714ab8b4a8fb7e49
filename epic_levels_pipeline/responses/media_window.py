"""Parts of a window of a media file for a model request: the window's bounds (:func:`media_window`), JPEG frames
sampled from it (:func:`sample_frames`) and its audio as wav (:func:`extract_wav`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .media_ffmpeg import MediaError, probe, run_ffmpeg


def media_window(path: str | Path, start: float | None, end: float | None) -> tuple[float, float]:
    """``(start, end)`` in seconds within the file, the file's duration filling what is None."""
    if start is not None and end is not None:
        return float(start), float(end)
    duration = probe(path).duration_s
    return float(start or 0.0), float(end if end is not None else duration)


def sample_frames(path: str | Path, start: float, end: float, fps: float, max_frames: int,
                  width: int) -> tuple[float, list[tuple[float, bytes]]]:
    """JPEG frames of ``[start, end)`` at ``fps`` (lowered to ``max_frames / duration`` when more
    would be needed), scaled to at most ``width`` pixels wide: ``(fps used, [(seconds from the
    file's start, jpeg bytes), ...])``. The fps filter emits frame ``k`` at ``k / fps`` after the
    window's start, so that is its timestamp."""
    span = end - start
    if span <= 0:
        raise MediaError(f"{path}: empty window {start:g}-{end:g} s")
    used = min(float(fps), max_frames / span)
    with tempfile.TemporaryDirectory(prefix="frames-") as tmp:
        run_ffmpeg(["-v", "error", "-y", "-ss", f"{start:.3f}", "-t", f"{span:.3f}", "-i", str(path),
                    "-map", "0:v:0", "-vf", f"fps={used:.6f},scale='min({int(width)},iw)':-2", "-frames:v",
                    str(int(max_frames)), "-q:v", "4", os.path.join(tmp, "f_%05d.jpg")],
                   "sampling frames", path)
        files = sorted(Path(tmp).glob("f_*.jpg"))
        if not files:
            raise MediaError(f"{path}: no frames in {start:g}-{end:g} s")
        return used, [(start + k / used, f.read_bytes()) for k, f in enumerate(files)]


def extract_wav(path: str | Path, start: float, end: float, rate: int) -> bytes | None:
    """The window's first audio track as mono 16-bit PCM wav at ``rate`` Hz; None when the file has
    no audio track."""
    if not probe(path).has_audio:
        return None
    with tempfile.TemporaryDirectory(prefix="wav-") as tmp:
        out = os.path.join(tmp, "a.wav")
        run_ffmpeg(["-v", "error", "-y", "-ss", f"{start:.3f}", "-t", f"{end - start:.3f}", "-i", str(path),
                    "-map", "0:a:0", "-ac", "1", "-ar", str(int(rate)), "-c:a", "pcm_s16le", "-f", "wav", out],
                   "extracting audio", path)
        return Path(out).read_bytes()
