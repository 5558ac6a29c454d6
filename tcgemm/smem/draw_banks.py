"""Pictures of shared-memory tiles and their banks, from tcgemm.layouts layouts. Pure (matplotlib).

A tile is drawn in 16-byte chunks (8 fp16), the unit of the kernels' stores and of an ldmatrix
row. A 16-byte chunk at byte address ``a`` covers banks 4g..4g+3 with ``g = (a // 16) % 8``: its
*bank group*, one of eight, one colour each (Okabe-Ito, as in tcgemm.fragments.draw).
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.layouts import Layout
from tcgemm.smem.banks import Access, analyze, phase_name, phases
from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, new_figure, text_color_on

CHUNK_BYTES = 16
GROUPS = 8
CELL_IN = 0.5


def bank_group(address) -> np.ndarray:
    return (np.asarray(address) // CHUNK_BYTES) % GROUPS


def chunk_addresses(layout: Layout, rows: int, chunks: int) -> np.ndarray:
    """(rows, chunks) byte address of every 16-byte chunk of a tile."""
    chunk_elems = CHUNK_BYTES // layout.elem_bytes
    r, c = np.meshgrid(np.arange(rows), np.arange(chunks) * chunk_elems, indexing="ij")
    addresses = layout(r, c)
    if np.any(addresses % CHUNK_BYTES):
        raise ValueError(f"{layout.name}: chunks are not 16-byte aligned, so they have no single bank group")
    return addresses


def phase_cells(access: Access, addresses: np.ndarray, phase: int) -> list[tuple[int, int]]:
    """The (row, chunk) cells that the lanes of one phase of ``access`` read or write."""
    where = {int(a): (r, c) for (r, c), a in np.ndenumerate(addresses)}
    lanes = phases(access)[phase]
    missing = [int(lane) for lane in lanes if int(access.addresses[lane]) not in where]
    if missing:
        raise ValueError(f"lanes {missing} of phase {phase} address chunks outside the drawn tile")
    return [where[int(access.addresses[lane])] for lane in lanes]


def _grid(ax, colors, labels, title: str) -> None:
    rows, cols = colors.shape[:2]
    for (r, c), label in np.ndenumerate(labels):
        face = colors[r, c]
        ax.add_patch(Rectangle((c, r), 1, 1, facecolor=face, edgecolor="white", linewidth=1))
        ax.text(c + 0.5, r + 0.5, label, ha="center", va="center", fontsize=7, color=text_color_on(face))
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(cols) + 0.5, [str(c) for c in range(cols)], fontsize=7)
    ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in range(rows)], fontsize=7)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, fontsize=9)


def _group_colors(groups: np.ndarray) -> np.ndarray:
    from matplotlib.colors import to_rgb

    palette = np.array([to_rgb(h) for h in GROUP_HUES])
    return palette[groups]


def bank_map_figure(panels: dict[str, tuple[Layout, Access | None]], rows: int = 16, chunks: int = 4,
                    phase: int = 0) -> Figure:
    """One panel per layout: the tile in its own (row, chunk) coordinates, each chunk coloured and
    labelled by its bank group. With an access, the chunks of one of its phases are outlined and the
    title says how many wavefronts that phase needs."""
    fig = new_figure(len(panels) * (chunks * CELL_IN + 0.9) + 0.3, rows * CELL_IN + 1.3, layout="constrained")
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, (layout, access)) in zip(axes, panels.items()):
        addresses = chunk_addresses(layout, rows, chunks)
        groups = bank_group(addresses)
        labels = np.vectorize(lambda g: f"{4 * g}-{4 * g + 3}")(groups)
        if access is not None:
            report = analyze(access).phases[phase]
            title = f"{title}\n{phase_name(phase)}: {report.wavefronts} wavefront{'s' if report.wavefronts > 1 else ''}"
        _grid(ax, _group_colors(groups), labels, title)
        if access is not None:
            for r, c in phase_cells(access, addresses, phase):
                ax.add_patch(Rectangle((c + 0.06, r + 0.06), 0.88, 0.88, fill=False, edgecolor="black", linewidth=2.2))
        ax.set_xlabel("16-byte chunk of the tile row", fontsize=8)
    axes[0].set_ylabel("tile row", fontsize=8)
    fig.suptitle("cell = banks of the 16-byte chunk; outlined = read together in one phase" if any(
        a is not None for _, a in panels.values()) else "cell = banks of the 16-byte chunk", fontsize=9)
    return fig


def smem_lines(ax, layout: Layout, rows: int, chunks: int, title: str, hue_step: int = 1) -> None:
    """Shared memory as it is, on ``ax``: 128-byte lines of eight 16-byte slots (slot = bank group),
    each naming the chunk (row,chunk) of the rows x chunks tile it holds, coloured by the chunk's
    index (hue ``chunk * hue_step``); slots the tile does not use stay grey."""
    addresses = chunk_addresses(layout, rows, chunks)
    lines = int(addresses.max()) // (CHUNK_BYTES * GROUPS) + 1
    held = np.full((lines, GROUPS), "", dtype=object)
    held_chunk = np.full((lines, GROUPS), -1)
    for (r, c), a in np.ndenumerate(addresses):
        line, slot = divmod(int(a) // CHUNK_BYTES, GROUPS)
        held[line, slot] = f"{r},{c}"
        held_chunk[line, slot] = c
    empty = np.array([0.95, 0.95, 0.95])
    colors = np.where(held_chunk[..., None] >= 0, _group_colors(np.maximum(held_chunk, 0) * hue_step % GROUPS), empty)
    _grid(ax, colors, held, title)
    ax.set_xlabel("16-byte slot of the 128-byte line = bank group", fontsize=8)
    ax.set_ylabel("128-byte line", fontsize=8)


def permutation_figure(layout: Layout, rows: int = 16, chunks: int = 4, row_label: str = "tile row",
                       chunk_label: str = "chunk") -> Figure:
    """The same layout twice. Left, shared memory as it is: 128-byte lines of eight 16-byte slots
    (slot = bank group), each naming the tile chunk it holds, coloured by that chunk's index.
    Right, the tile as the kernel indexes it, each chunk coloured by its bank group; its axes are
    labelled `row_label` and `chunk_label` (e.g. rows of K for an MN-major tile)."""
    addresses = chunk_addresses(layout, rows, chunks)
    lines = int(addresses.max()) // (CHUNK_BYTES * GROUPS) + 1
    cell = min(CELL_IN, (COLUMN_WIDTH_IN - 2.2) / (GROUPS + chunks))
    fig = new_figure((GROUPS + chunks) * cell + 2.2, max(lines, rows) * cell + 1.3, layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[GROUPS, chunks])
    smem_lines(left, layout, rows, chunks, "shared memory: which tile chunk (row,chunk)\neach slot holds",
               hue_step=GROUPS // chunks)
    groups = bank_group(addresses)
    _grid(right, _group_colors(groups), np.vectorize(lambda g: f"g{g}")(groups), "the tile: bank group\nof each chunk")
    right.set_xlabel(chunk_label, fontsize=8)
    right.set_ylabel(row_label, fontsize=8)
    fig.suptitle(layout.name, fontsize=9)
    return fig


def swizzle_modes_figure() -> Figure:
    """The first 1024 bytes of shared memory in each swizzle mode of TMA and wgmma (tcgemm.canonical),
    filled by the K-major fp16 tile that fits them (kilobyte_tile), as smem_lines draws them: 2 x 2 panels."""
    from tcgemm.canonical import SWIZZLE_MODES, kilobyte_tile, kmajor_layout

    cell = min(CELL_IN, (COLUMN_WIDTH_IN - 1.4) / (2 * GROUPS))
    fig = new_figure(2 * GROUPS * cell + 1.4, 2 * GROUPS * cell + 2.2, layout="constrained")
    for ax, m in zip(fig.subplots(2, 2).ravel(), SWIZZLE_MODES.values()):
        rows, k_elems = kilobyte_tile(m.name)
        chunks = k_elems * 2 // CHUNK_BYTES
        smem_lines(ax, kmajor_layout(m.name, rows, k_elems), rows, chunks,
                   f"{m.name}: {m.notation}, tile {rows} x {chunks} chunks", hue_step=GROUPS // chunks)
    fig.suptitle("cell = tile (row,chunk) each 16-byte slot holds, coloured by chunk", fontsize=9)
    return fig
