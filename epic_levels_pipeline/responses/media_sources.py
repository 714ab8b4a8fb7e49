"""Where a clip's source video is looked for under the media root (:data:`MEDIA_LAYOUTS`, each with the
extensions of :data:`VIDEO_EXTENSIONS`), the reason given when it is missing, and a file's SHA-256."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

VIDEO_EXTENSIONS = (".mp4", ".MP4", ".mkv", ".mov", ".webm", ".avi")

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
