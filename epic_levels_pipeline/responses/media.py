"""Cutting clips out of source videos, and their audio-silenced twins, with ffmpeg.

Pure core: no Dagster here. Every ffmpeg call goes through the binary bundled with ``imageio-ffmpeg``
(:func:`ffmpeg_exe`); there is no ffprobe, so :func:`probe` parses the banner ``ffmpeg -i FILE`` prints.

Layout on disk (see ``settings.py``): source videos live at ``<media_root>/<dataset>/<video_id><ext>`` or where
the datasets' own download tools put them (:data:`MEDIA_LAYOUTS`);
:func:`prepare_clip_media` writes ``<out_dir>/<clip_key>.mp4`` (the cut clip) and
``<out_dir>/<clip_key>.silenced.mp4`` (same video, audio replaced by digital silence).

Decisions worth knowing:

- **Accurate cuts, always re-encoded.** ``-ss`` before ``-i`` plus ``-t`` with re-encoding is frame
  accurate (ffmpeg decodes from the preceding key frame and drops frames before the start). Video is
  H.264 (libx264, ``-preset ultrafast``, CRF :data:`CRF`, yuv420p so every player and model API can read
  it); audio, when the source has any, is AAC. Only the first video and first audio stream are kept;
  subtitle, data (e.g. GoPro telemetry) and attachment streams are dropped.
- **A window past the source's end is an error, not clamped.** If ``end_s`` exceeds the source duration by
  more than :data:`END_TOLERANCE_S`, :func:`cut_clip` raises :class:`MediaError` (and
  :func:`prepare_clip_media` turns it into a ``skipped`` clip with that message): a silently shortened
  clip would change what the question's evidence window contains. Within the tolerance (container
  durations are rounded and annotations often end "at the end") the cut just runs to the source's end, so
  such a clip may be up to :data:`END_TOLERANCE_S` short.
- **Atomic writes.** Every output is written to a hidden temp file in the destination directory and moved
  into place with :func:`os.replace`; a failed or interrupted run never leaves a partial file at the
  destination, and an existing destination is left untouched when a re-cut fails. Temp files of a failed
  run are removed (a hard kill can leave one behind: ``.<name>.tmp-*``; such names are never read).
- **The silenced variant** stream-copies the clip's video (bit-identical packets) and replaces the audio by
  ``anullsrc`` with the clip's sample rate and channel layout (48 kHz stereo if the clip has no audio or
  they are unknown), limited to the clip's duration with an explicit ``-t``, encoded AAC. A clip without
  audio still gets a silent track, so "silenced" always means "audio present and all zero".
- **Idempotent re-runs.** :func:`prepare_clip_media` reuses an existing clip if its mtime is not older than
  the source's, and an existing silenced file if it is not older than the clip; a reused file that ffmpeg
  cannot read is cut again. The clip key names the window, so the window is not re-checked.
- :func:`audio_rms` is measured on a mono downmix, in full-scale units (a full-scale square wave is 1.0,
  a full-scale sine about 0.707; digital silence exactly 0.0).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VIDEO_EXTENSIONS = (".mp4", ".MP4", ".mkv", ".mov", ".webm", ".avi")

#: libx264 constant rate factor for cut clips (23 is x264's default: visually fine, small files).
CRF = 23
#: AAC bit rate of cut clips' audio.
AUDIO_BITRATE = "128k"
#: How far (seconds) a window may end past the source's probed duration before the cut is refused.
END_TOLERANCE_S = 0.1
#: Sample rate and channel layout of the silent track when the clip has no (readable) audio.
DEFAULT_SAMPLE_RATE = 48_000
DEFAULT_CHANNEL_LAYOUT = "stereo"


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


#: Where a source video may sit under the media root, tried in this order (``{ext}`` over
#: :data:`VIDEO_EXTENSIONS` for each): this project's flat layout first, then as each dataset's own download
#: tools lay it out — EPIC-KITCHENS' downloader ``EPIC-KITCHENS/P01/videos/P01_01.MP4`` (or the participant
#: folders directly under the root), HD-EPIC's ``HD-EPIC/Videos/P01/<video_id>.mp4`` (or ``Videos/...``).
MEDIA_LAYOUTS: dict[str, tuple[str, ...]] = {
    "epic_sounds": ("{dataset}/{video}", "EPIC-KITCHENS/{participant}/videos/{video}", "{participant}/videos/{video}"),
    "hd_epic": ("{dataset}/{video}", "HD-EPIC/Videos/{participant}/{video}", "Videos/{participant}/{video}"),
}
_DEFAULT_LAYOUTS = ("{dataset}/{video}",)


def source_video_stems(media_root: Path, dataset: str, video_id: str) -> list[Path]:
    """The paths (less the extension) a source video is looked for at, in order (see :data:`MEDIA_LAYOUTS`)."""
    m = re.match(r"^(P\d+)", video_id)
    participant = m.group(1) if m else video_id
    return [Path(media_root) / layout.format(dataset=dataset, participant=participant, video=video_id)
            for layout in MEDIA_LAYOUTS.get(dataset, _DEFAULT_LAYOUTS)]


def find_source_video(media_root: Path, dataset: str, video_id: str) -> Path | None:
    """The first of :func:`source_video_stems` with an extension of :data:`VIDEO_EXTENSIONS` that exists
    (layouts in order, extensions in order within each layout).

    Returns ``None`` when none exists. Only regular files count (a directory of that name does not).
    """
    for stem in source_video_stems(media_root, dataset, video_id):
        for ext in VIDEO_EXTENSIONS:
            candidate = stem.parent / f"{stem.name}{ext}"
            if candidate.is_file():
                return candidate
    return None


def missing_source_reason(media_root: Path, dataset: str, video_id: str) -> str:
    """``no source video <media_root>/<dataset>/<video_id>.{mp4,MP4,...}`` and the other layouts looked in."""
    exts = ",".join(e.lstrip(".") for e in VIDEO_EXTENSIONS)
    first, *others = source_video_stems(media_root, dataset, video_id)
    also = f" (nor {', '.join(str(o) + '.*' for o in others)})" if others else ""
    return f"no source video {first}.{{{exts}}}{also}"


def sha256_file(path: Path | str, chunk_size: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks (constant memory for multi-gigabyte sources)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------- probing

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


# ----------------------------------------------------------------------------------------- atomic writes

def _temp_for(out: Path) -> Path:
    """Hidden temp path next to ``out`` (same filesystem, so os.replace is atomic)."""
    return out.with_name(f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def _write_atomically(out: Path, args_before_output: list[str], what: str, subject: Path) -> Path:
    """Run ffmpeg writing mp4 to a temp file, then move it to ``out``; remove the temp file on any failure."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_for(out)
    try:
        run_ffmpeg(["-v", "error", "-y", *args_before_output, "-f", "mp4", str(tmp)], what, subject)
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise MediaError(f"{subject}: {what} produced no output")
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


# --------------------------------------------------------------------------------------------- cutting

def cut_clip(source: Path, start_s: float, end_s: float, out: Path) -> Path:
    """Cut ``[start_s, end_s)`` of ``source`` into an H.264/AAC mp4 at ``out`` (atomic), returning ``out``.

    Raises :class:`MediaError` when the source is unreadable, the window is empty or negative
    (``start_s < 0`` or ``end_s <= start_s``), or the window ends more than :data:`END_TOLERANCE_S` past
    the source's end (no clamping: see the module docstring). A source without audio gives a clip without
    audio; one without video is refused (a clip is a video).
    """
    source = Path(source)
    start_s, end_s = float(start_s), float(end_s)
    if not (math.isfinite(start_s) and math.isfinite(end_s)) or start_s < 0 or end_s <= start_s:
        raise MediaError(f"{source}: invalid window {start_s}-{end_s} s")
    info = probe(source)
    if not info.has_video:
        raise MediaError(f"{source}: no video stream")
    if end_s > info.duration_s + END_TOLERANCE_S:
        raise MediaError(
            f"{source}: window {start_s:g}-{end_s:g} s ends past the video's end ({info.duration_s:g} s)"
        )
    args = ["-ss", f"{start_s:.3f}", "-i", str(source), "-t", f"{end_s - start_s:.3f}",
            "-map", "0:v:0", "-c:v", "libx264", "-preset", "ultrafast", "-crf", str(CRF),
            "-pix_fmt", "yuv420p"]
    if info.has_audio:
        args += ["-map", "0:a:0", "-c:a", "aac", "-b:a", AUDIO_BITRATE]
    args += ["-sn", "-dn", "-map_metadata", "-1", "-movflags", "+faststart"]
    return _write_atomically(Path(out), args, f"cutting {start_s:g}-{end_s:g} s", source)


def silence_audio(clip: Path, out: Path) -> Path:
    """Copy ``clip``'s video stream and replace its audio with digital silence of the clip's duration.

    The silent track is ``anullsrc`` at the clip's sample rate and channel layout (48 kHz stereo when the
    clip has no audio, which still gets a silent track, or when they are unknown), cut to the clip's
    probed duration with ``-t``, encoded AAC. Written atomically; returns ``out``. Raises
    :class:`MediaError` if the clip is unreadable.
    """
    clip = Path(clip)
    info = probe(clip)
    rate = info.audio_sample_rate or DEFAULT_SAMPLE_RATE
    layout = info.audio_channel_layout or DEFAULT_CHANNEL_LAYOUT
    args = ["-i", str(clip), "-f", "lavfi", "-t", f"{info.duration_s:.3f}",
            "-i", f"anullsrc=r={rate}:cl={layout}"]
    if info.has_video:
        args += ["-map", "0:v:0", "-c:v", "copy"]
    args += ["-map", "1:a:0", "-c:a", "aac", "-b:a", "64k", "-map_metadata", "-1", "-movflags", "+faststart"]
    return _write_atomically(Path(out), args, "silencing audio", clip)


def audio_rms(path: Path | str) -> float:
    """RMS of the first audio track, decoded to 16-bit mono PCM, in full-scale units (silence = 0.0).

    The file is streamed through an ffmpeg pipe in chunks, so long files need little memory. An audio
    track that decodes to no samples gives 0.0. Raises :class:`MediaError` if the file has no audio stream
    or cannot be decoded.
    """
    path = Path(path)
    if not probe(path).has_audio:
        raise MediaError(f"{path}: no audio stream")
    cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", "-i", str(path),
           "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-acodec", "pcm_s16le", "-"]
    total = 0.0
    count = 0
    leftover = b""
    with subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        assert p.stdout is not None and p.stderr is not None
        # stderr is only read after stdout ends; -v error keeps it far below the pipe buffer.
        while chunk := p.stdout.read(1 << 20):
            data = leftover + chunk
            usable = len(data) - len(data) % 2
            leftover = data[usable:]
            samples = np.frombuffer(data[:usable], dtype="<i2").astype(np.float64)
            total += float(np.dot(samples, samples))
            count += samples.size
        err = p.stderr.read().decode(errors="replace")
        rc = p.wait()
    if rc != 0:
        raise MediaError(f"{path}: decoding audio failed (ffmpeg exit {rc}): {_tail(err)}")
    if count == 0:
        return 0.0
    return math.sqrt(total / count) / 32768.0


# ---------------------------------------------------------------------------------------- per-clip step

@dataclass
class ClipMedia:
    """Outcome of :func:`prepare_clip_media` for one clip.

    ``status`` is ``"ready"`` (both files exist; paths, hashes and durations filled) or ``"skipped"``
    (``reason`` says why; the path/hash/duration fields are ``None``, ``source`` is set if one was found).
    """

    clip_key: str
    status: str  # "ready" | "skipped"
    reason: str
    source: str | None
    clip_path: str | None
    silenced_path: str | None
    clip_sha256: str | None
    silenced_sha256: str | None
    duration_s: float | None
    silenced_duration_s: float | None


def _fresh(path: Path, than: Path) -> bool:
    """``path`` exists and is not older than ``than`` (equal mtimes count as fresh)."""
    try:
        return path.stat().st_mtime_ns >= than.stat().st_mtime_ns
    except FileNotFoundError:
        return False


def _probe_or_none(path: Path) -> MediaInfo | None:
    try:
        return probe(path)
    except MediaError:
        return None


def prepare_clip_media(
    media_root: Path,
    out_dir: Path,
    clip_key: str,
    dataset: str,
    video_id: str,
    start_s: float,
    end_s: float,
) -> ClipMedia:
    """Cut ``<out_dir>/<clip_key>.mp4`` and ``<out_dir>/<clip_key>.silenced.mp4`` from the clip's source.

    Never raises for media problems: a missing source video gives ``status="skipped"`` with a reason naming
    the paths looked for (``no source video <media_root>/<dataset>/<video_id>.{mp4,MP4,...}``), and any
    :class:`MediaError` while probing or cutting (unreadable file, window past the end ...) gives
    ``"skipped"`` with the error text. Existing outputs are reused when they are not older than their
    input (clip vs source, silenced vs clip) and ffmpeg can read them; otherwise they are (re)made.
    Raises ``ValueError`` only for a ``clip_key`` that is not a plain file name (it would escape
    ``out_dir``).
    """
    if not clip_key or clip_key in {".", ".."} or "/" in clip_key or "\\" in clip_key or "\0" in clip_key:
        raise ValueError(f"clip key {clip_key!r} is not a plain file name")
    out_dir = Path(out_dir)

    def skipped(reason: str, source: Path | None = None) -> ClipMedia:
        return ClipMedia(clip_key, "skipped", reason, str(source) if source else None,
                         None, None, None, None, None, None)

    source = find_source_video(Path(media_root), dataset, video_id)
    if source is None:
        return skipped(missing_source_reason(Path(media_root), dataset, video_id))

    clip_path = out_dir / f"{clip_key}.mp4"
    silenced_path = out_dir / f"{clip_key}.silenced.mp4"
    try:
        clip_info = _probe_or_none(clip_path) if _fresh(clip_path, source) else None
        if clip_info is None:
            cut_clip(source, start_s, end_s, clip_path)
            clip_info = probe(clip_path)
        silenced_info = _probe_or_none(silenced_path) if _fresh(silenced_path, clip_path) else None
        if silenced_info is None:
            silence_audio(clip_path, silenced_path)
            silenced_info = probe(silenced_path)
    except MediaError as exc:
        return skipped(str(exc), source)
    return ClipMedia(
        clip_key=clip_key,
        status="ready",
        reason="",
        source=str(source),
        clip_path=str(clip_path),
        silenced_path=str(silenced_path),
        clip_sha256=sha256_file(clip_path),
        silenced_sha256=sha256_file(silenced_path),
        duration_s=clip_info.duration_s,
        silenced_duration_s=silenced_info.duration_s,
    )


# ------------------------------------------------------------- parts of a window for a model request

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


# --------------------------------------------------------------------------------------- test material

def make_test_video(
    path: Path,
    duration_s: float,
    *,
    tone_hz: float | None = 440.0,
    size: str = "160x120",
    rate: int = 10,
) -> Path:
    """Synthetic H.264/AAC mp4: ffmpeg's ``testsrc`` pattern plus a ``sine`` tone (48 kHz mono).

    ``tone_hz=None`` makes a video without an audio track. The lavfi ``sine`` source has amplitude 1/8,
    so the tone's :func:`audio_rms` is about 0.088. Written atomically; returns ``path``.
    """
    d = f"{float(duration_s):.3f}"
    args = ["-f", "lavfi", "-i", f"testsrc=size={size}:rate={rate}:duration={d}"]
    if tone_hz is not None:
        args += ["-f", "lavfi", "-i", f"sine=frequency={tone_hz:g}:sample_rate=48000:duration={d}"]
    args += ["-map", "0:v:0", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    if tone_hz is not None:
        args += ["-map", "1:a:0", "-c:a", "aac", "-b:a", "96k"]
    return _write_atomically(Path(path), args, "making a test video", Path(path))
