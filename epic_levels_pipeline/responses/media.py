"""Cutting clips out of source videos, and their audio-silenced twins, with ffmpeg (pure core).

:func:`prepare_clip_media` writes ``<out_dir>/<clip_key>.mp4`` and ``<out_dir>/<clip_key>.silenced.mp4``. Cuts are
frame accurate and re-encoded (H.264 + AAC, first video and audio stream only); a window past the source's end
by more than :data:`END_TOLERANCE_S` is a :class:`MediaError` (a ``skipped`` clip), never clamped; every output is
written atomically; the silenced twin keeps the video's packets and always carries an all-zero audio track;
re-runs reuse files no older than their source. Running ffmpeg lives in :mod:`.media_ffmpeg`, finding sources in
:mod:`.media_sources`, a request's frames and audio in :mod:`.media_window`; every name is importable from here.
Why: docs/design/model-calls.md."""

from __future__ import annotations

import math
import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .media_ffmpeg import MediaError, MediaInfo, _tail, ffmpeg_exe, probe, run_ffmpeg
from .media_sources import find_source_video, missing_source_reason, sha256_file

#: libx264 constant rate factor for cut clips (23 is x264's default: visually fine, small files).
CRF = 23
#: AAC bit rate of cut clips' audio.
AUDIO_BITRATE = "128k"
#: How far (seconds) a window may end past the source's probed duration before the cut is refused.
END_TOLERANCE_S = 0.1
#: Sample rate and channel layout of the silent track when the clip has no (readable) audio.
DEFAULT_SAMPLE_RATE = 48_000
DEFAULT_CHANNEL_LAYOUT = "stereo"


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


def strip_audio(clip: Path, out: Path) -> Path:
    """Copy ``clip``'s video stream alone (no audio track) to ``out`` (atomic; kept while it is newer than
    ``clip``): what a model is sent to tell whether it uses the audio it is sent."""
    clip, out = Path(clip), Path(out)
    if out.is_file() and out.stat().st_mtime >= clip.stat().st_mtime:
        return out
    args = ["-i", str(clip), "-map", "0:v:0", "-c:v", "copy", "-an", "-map_metadata", "-1", "-movflags", "+faststart"]
    return _write_atomically(out, args, "stripping audio", clip)


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
