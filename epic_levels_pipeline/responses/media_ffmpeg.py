"""The bundled ffmpeg (``imageio-ffmpeg``): running it (:func:`run_ffmpeg`; a failure is a :class:`MediaError`
naming the file) and probing a media file (:func:`probe`: duration and streams, read from the banner
``ffmpeg -i FILE`` prints, as there is no ffprobe)."""

from __future__ import annotations

import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path


class MediaError(Exception):
    """ffmpeg could not read, cut or re-encode a media file; the message names the file."""


@dataclass(frozen=True)
class MediaInfo:
    """What :func:`probe` learns from ``ffmpeg -i``.

    ``has_video`` ignores cover-art streams (``attached pic``). ``audio_sample_rate`` and
    ``audio_channel_layout`` describe the first audio stream (``None`` when there is none or ffmpeg does
    not print them); the layout is as ffmpeg names it (``mono``, ``stereo``, ``5.1(side)``, ``3c`` ...).
    """

    duration_s: float
    has_audio: bool
    has_video: bool
    audio_sample_rate: int | None = None
    audio_channel_layout: str | None = None


def ffmpeg_exe() -> str:
    """Path of the ffmpeg binary bundled with imageio-ffmpeg (or the one ``IMAGEIO_FFMPEG_EXE`` names)."""
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


_DURATION_RE = re.compile(r"^\s*Duration:\s*(?:(\d+):(\d+):(\d+(?:\.\d+)?)|N/A)", re.M)
_STREAM_RE = re.compile(r"^\s*Stream #\d+:\d+\S*:\s*(Video|Audio|Subtitle|Data|Attachment):\s*(.*)$", re.M)
_AUDIO_PARAMS_RE = re.compile(r"(\d+) Hz,\s*([^,]+)")
_TIME_RE = re.compile(r"time=\s*(\d+):(\d+):(\d+(?:\.\d+)?)")


def _tail(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) if lines else "(no output)"


def run_ffmpeg(args: list[str], what: str, path: Path | str) -> subprocess.CompletedProcess:
    """Run ffmpeg with ``args``; a non-zero exit becomes a MediaError naming ``path`` and ffmpeg's last words."""
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", *args]
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        raise MediaError(f"{path}: {what} failed (ffmpeg exit {proc.returncode}): {_tail(proc.stderr)}")
    return proc


def _hms(h: str, m: str, s: str) -> float:
    return int(h) * 3600 + int(m) * 60 + float(s)


def probe(path: Path | str) -> MediaInfo:
    """Duration and stream kinds of a media file, from the banner of ``ffmpeg -i PATH``.

    ``ffmpeg -i`` without an output always exits non-zero, so success is judged by the ``Input #0``
    banner. When the container states no duration (``Duration: N/A``: live-recorded mkv/webm, raw
    elementary streams) the file is remuxed to the null muxer (stream copy, fast; decoding if the packets
    carry no timestamps) and the last ``time=`` ffmpeg reports is used. Raises
    :class:`MediaError` naming the file when it is missing, unreadable, has no audio or video stream, or
    has no determinable duration.
    """
    path = Path(path)
    if not path.is_file():
        raise MediaError(f"{path}: no such file")
    proc = subprocess.run(
        [ffmpeg_exe(), "-hide_banner", "-nostdin", "-i", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
    )
    err = proc.stderr
    if "Input #0" not in err:
        raise MediaError(f"{path}: ffmpeg cannot read this file: {_tail(err, 2)}")

    has_video = has_audio = False
    sample_rate: int | None = None
    layout: str | None = None
    for kind, rest in _STREAM_RE.findall(err):
        if kind == "Video" and "(attached pic)" not in rest:
            has_video = True
        elif kind == "Audio" and not has_audio:
            has_audio = True
            m = _AUDIO_PARAMS_RE.search(rest)
            if m:
                sample_rate = int(m.group(1))
                layout = m.group(2).strip()
                n = re.fullmatch(r"(\d+) channels?", layout)
                if n:  # unnamed layouts print as "3 channels"; anullsrc wants "3c"
                    layout = f"{n.group(1)}c"
    if not (has_audio or has_video):
        raise MediaError(f"{path}: no audio or video stream")

    m = _DURATION_RE.search(err)
    if m and m.group(1) is not None:
        duration = _hms(m.group(1), m.group(2), m.group(3))
    else:
        # No stated duration: remux to the null muxer (fast); packets without timestamps (raw elementary
        # streams) report time=N/A there, so then decode (slow, but only for such odd files).
        times: list[tuple[str, str, str]] = []
        for codec in (["-c", "copy"], []):
            proc = run_ffmpeg(["-i", str(path), "-map", "0:v?", "-map", "0:a?", *codec, "-f", "null", "-"],
                        "measuring duration", path)
            times = _TIME_RE.findall(proc.stderr)
            if times:
                break
        if not times:
            raise MediaError(f"{path}: cannot determine duration")
        duration = _hms(*times[-1])
    if not math.isfinite(duration) or duration <= 0:
        raise MediaError(f"{path}: duration is {duration} s")
    return MediaInfo(duration, has_audio, has_video, sample_rate, layout)
