"""The media parts of a chat request for a clip window, by route (used by :mod:`.openai_compat`).

:class:`MediaParts` turns ``(request, route settings)`` into the content parts, the ``extra_body`` and
the route string the request goes out with (see :mod:`.openai_compat` for the routes). The ffmpeg work
is :mod:`..media`'s (:func:`~..media.cut_clip`, :func:`~..media.sample_frames`,
:func:`~..media.extract_wav`); what is prepared for a window (base64 video, frames, wav) is memoised
per file, window and route parameters (bounded LRU), so the items of one clip share one ffmpeg run, and
concurrent requests for the same window wait for the first; so are the parts as the JSON a request body carries
(:meth:`MediaParts.encoded`), so a clip × condition's media is encoded once, not once per item. Blocking (but
:meth:`MediaParts.encoded_if_ready`): call it in a worker thread.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

from ..calls import CallRequest
from ..media import MediaError, cut_clip
from ..media_window import extract_wav, media_window, sample_frames


def server_fps(r: dict, span: float) -> float | None:
    """The ``mm_processor_kwargs.fps`` a ``video_url`` / ``file_url`` request asks the server to sample
    at: ``video_fps`` lowered so at most ``max_frames`` frames cover ``span`` seconds; None when unset."""
    fps = r.get("video_fps")
    if not fps:
        return None
    bound = r.get("max_frames")
    return min(float(fps), bound / span) if bound and span > 0 else float(fps)


class MediaParts:
    """See the module docstring. ``work_dir`` holds windows cut for ``video_url``/``file_url`` (default:
    a temporary directory of the process); ``entries`` bounds the memo."""

    def __init__(self, work_dir: str | None = None, entries: int = 16):
        self._work_dir = work_dir
        self._entries = max(1, int(entries))
        self._memo: OrderedDict[tuple, object] = OrderedDict()
        self._memo_lock = threading.Lock()
        self._key_locks: dict[tuple, threading.Lock] = {}

    def memoised(self, key: tuple, compute):
        """``compute()`` once per key for the process; concurrent callers of the same key wait for the first."""
        with self._memo_lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
            lock = self._key_locks.setdefault(key, threading.Lock())
        with lock:
            with self._memo_lock:
                if key in self._memo:
                    return self._memo[key]
            value = compute()
            with self._memo_lock:
                self._memo[key] = value
                while len(self._memo) > self._entries:
                    self._memo.popitem(last=False)
                self._key_locks.pop(key, None)
            return value

    def _encoded_key(self, request: CallRequest, r: dict) -> tuple:
        path = request.media_path
        assert path is not None
        st = os.stat(path)
        return ("encoded", tuple(sorted(r.items())), os.path.abspath(path), st.st_size, st.st_mtime_ns,
                request.start_offset_s, request.end_offset_s)

    def encoded(self, request: CallRequest, r: dict) -> tuple[bytes, dict, str]:
        """(the media parts as JSON array items, comma-separated, UTF-8; extra_body; route), memoised: what
        :meth:`prepare` gives, serialised once per file, window and route for every request that sends it."""
        path = request.media_path
        if not path or not os.path.isfile(path):
            raise MediaError(f"media file not found: {path}")

        def encode():
            parts, extra, route = self.prepare(request, r)
            return (",".join(json.dumps(p, ensure_ascii=False, separators=(",", ":")) for p in parts).encode(),
                    extra, route)

        return self.memoised(self._encoded_key(request, r), encode)

    def encoded_if_ready(self, request: CallRequest, r: dict) -> tuple[bytes, dict, str] | None:
        """:meth:`encoded`'s value when it is memoised already (None otherwise, or when the file is gone): a
        lookup that does not block, for the event loop."""
        try:
            key = self._encoded_key(request, r)
        except (OSError, AssertionError):
            return None
        with self._memo_lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        return None

    def window_file(self, path: str, start: float | None, end: float | None) -> str:
        """``path`` itself when the whole file is asked for, else the window cut to ``work_dir``."""
        if start is None and end is None:
            return path
        s, e = media_window(path, start, end)
        with self._memo_lock:
            if self._work_dir is None:
                self._work_dir = tempfile.mkdtemp(prefix="epic-levels-windows-")
        st = os.stat(path)
        out = Path(self._work_dir) / f"{Path(path).stem}.{st.st_size}.{st.st_mtime_ns}.{s:.3f}-{e:.3f}.mp4"
        if not out.is_file():
            cut_clip(Path(path), s, e, out)
        return str(out)

    def prepare(self, request: CallRequest, r: dict) -> tuple[list[dict], dict, str]:
        """(media parts, extra_body, route) for a request with media."""
        path = request.media_path
        assert path is not None
        if not os.path.isfile(path):
            raise MediaError(f"media file not found: {path}")
        st = os.stat(path)
        start, end = request.start_offset_s, request.end_offset_s
        ident = (os.path.abspath(path), st.st_size, st.st_mtime_ns, start, end)
        parts: list[dict] = []
        extra: dict = {}
        processor: dict = {}
        bits: list[str] = []
        video = r["video_route"]
        if video in ("video_url", "file_url"):
            if video == "video_url":
                data = self.memoised(("video", *ident), lambda: base64.b64encode(Path(
                    self.window_file(path, start, end)).read_bytes()).decode("ascii"))
                url = f"data:video/mp4;base64,{data}"
            else:
                url = Path(self.window_file(path, start, end)).resolve().as_uri()
            parts.append({"type": "video_url", "video_url": {"url": url}})
            fps = server_fps(r, (lambda w: w[1] - w[0])(media_window(path, start, end))) \
                if r.get("video_fps") else None
            if fps is not None:
                processor["fps"] = round(fps, 6)
            bits.append(f"video={video}" + (f"({fps:g}fps)" if fps is not None else ""))
        elif video == "frames":
            fps, n, width = float(r["frames_fps"]), int(r["max_frames"]), int(r["frame_width"])

            def frames():
                s, e = media_window(path, start, end)
                used, got = sample_frames(path, s, e, fps, n, width)
                return used, [(t, base64.b64encode(jpg).decode("ascii")) for t, jpg in got]

            used, got = self.memoised(("frames", fps, n, width, *ident), frames)
            for t, b64 in got:
                parts.append({"type": "text", "text": f"Frame at {t:.1f} s:"})
                parts.append({"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{b64}"}})
            bits.append(f"video=frames({len(got)}@{used:g}fps)")
        else:
            bits.append("video=none")

        audio = r["audio_route"]
        if audio == "input_audio":
            rate = int(r["audio_sample_rate"])

            def wav():
                s, e = media_window(path, start, end)
                raw = extract_wav(path, s, e, rate)
                return None if raw is None else base64.b64encode(raw).decode("ascii")

            data = self.memoised(("wav", rate, *ident), wav)
            if data is None:
                bits.append("audio=none(no audio track)")
            else:
                parts.append({"type": "input_audio", "input_audio": {"data": data, "format": "wav"}})
                bits.append("audio=input_audio")
        elif audio == "use_audio_in_video":
            processor["use_audio_in_video"] = True
            bits.append("audio=use_audio_in_video")
        else:
            bits.append("audio=none")
        if processor:
            extra["mm_processor_kwargs"] = processor
        return parts, extra, ";".join(bits)
