"""Add a standard VBA module to a ``vbaProject.bin`` on any system, without Office.

Used by ``build_addin.py`` to put the formulas' modules into the add-in.  Written from the
published specifications, MS-OVBA (the VBA project streams and their compression) and MS-CFB
(the compound file around them); no Office, COM or VBA editor is involved.  Python packages that
exist for this were tried first: ``ms-ovba-compression`` 1.0.1 loses bytes on a round trip
(its output of the formula module decompresses to 1072 of 1296 bytes, with oletools and with
itself), and ``ms-ovba`` 0.0.1 / ``ms-cfb`` 0.0.6 build projects from scratch and write scratch
files into the working directory; hence this module.

What :func:`add_module` changes, and why that is enough:

* the module's source goes into a new stream ``VBA/<name>``, MS-OVBA-compressed, with no
  compiled code in front of it (``MODULEOFFSET`` 0);
* the ``VBA/dir`` stream gets one more MODULE record (procedural) and a module count one higher;
* ``PROJECT`` lists ``Module=<name>`` and a closed ``[Workspace]`` window for it, and
  ``PROJECTwm`` maps its name to UTF-16, as the VBA editor writes them;
* every other stream is copied byte for byte.

Why Office compiles such a module from its source: ``_VBA_PROJECT`` is kept in its
version-independent 7-byte form (``Version`` 0xFFFF, no performance cache), which MS-OVBA 1.6
and 2.3.4.1 define as the interoperable form ("MUST be 0xFFFF on write", the cache "MUST NOT be
present on write"); with it, Office ignores every performance cache and compiles from the
source at ``MODULEOFFSET`` (2.3.4.2.3.2.5, 2.3.4.3).  xlwings' template already is such a
project, and xlwings ships source-only modules in it: in 0.37.8 the ``xlwings`` module of the
template and ``Main`` of ``xlwings.xlam`` have ``MODULEOFFSET`` 0 (its release script rewrites
them outside Office).  :func:`add_module` refuses a project that carries a performance cache.
"""

from __future__ import annotations

import struct

import olefile

ENDOFCHAIN = 0xFFFFFFFE
FREESECT = 0xFFFFFFFF
FATSECT = 0xFFFFFFFD
NOSTREAM = 0xFFFFFFFF
SECTOR = 512
MINI_SECTOR = 64
MINI_CUTOFF = 4096
#: ``_VBA_PROJECT`` without a performance cache: Reserved1 0x61CC, Version 0xFFFF, 0x00, 0x0001.
SOURCE_ONLY_VBA_PROJECT = bytes.fromhex("cc61ffff000100")


# --------------------------------------------------------------------------- MS-OVBA 2.4.1


def _copy_token_help(difference: int) -> tuple[int, int]:
    # Bits for the offset grow with the distance from the chunk start (at least 4).
    bit_count = max((difference - 1).bit_length(), 4)
    return bit_count, (0xFFFF >> bit_count) + 3


def _match_length(data: bytes, a: int, b: int, limit: int) -> int:
    """How many bytes from ``a`` equal those from ``b`` (at most ``limit``): a binary search
    of slice comparisons, each done in C, not a byte at a time in Python."""
    if data[a:a + limit] == data[b:b + limit]:
        return limit
    low, high = 0, limit  # data[a:a+low] matches, data[a:a+high] does not
    while high - low > 1:
        mid = (low + high) // 2
        if data[a:a + mid] == data[b:b + mid]:
            low = mid
        else:
            high = mid
    return low


def _compress_chunk(data: bytes, start: int, end: int) -> bytes:
    # Greedy longest match, the nearest of equally long ones (MS-OVBA 2.4.1.3.19.4 allows any
    # match; this choice is the one the committed add-in was built with, so the bytes stay
    # the same).  Only earlier positions that start with the same three bytes can give a copy
    # token (one of at least 3 bytes), so those are the only ones looked at (bytes.rfind,
    # nearest first): the byte-by-byte scan of every earlier position took seconds a chunk.
    out = bytearray()
    pos = start
    while pos < end:
        flag_at = len(out)
        out.append(0)
        flags = 0
        for bit in range(8):
            if pos >= end:
                break
            bit_count, max_length = _copy_token_help(pos - start)
            limit = min(max_length, end - pos)
            best_length = best_offset = 0
            if limit >= 3:
                head = data[pos:pos + 3]
                # A match may run on past pos (into the bytes it copies), so a candidate's
                # three bytes may end at pos + 1.
                candidate = data.rfind(head, start, pos + 2)
                while candidate >= 0:
                    length = _match_length(data, candidate, pos, limit)
                    if length > best_length:
                        best_length, best_offset = length, pos - candidate
                        if length == limit:
                            break
                    candidate = data.rfind(head, start, candidate + 2)
            if best_length >= 3:
                token = ((best_offset - 1) << (16 - bit_count)) | (best_length - 3)
                out += struct.pack("<H", token)
                flags |= 1 << bit
                pos += best_length
            else:
                out.append(data[pos])
                pos += 1
        out[flag_at] = flags
    return bytes(out)


def compress(data: bytes) -> bytes:
    """MS-OVBA compressed container of ``data`` (2.4.1.3.1, greedy longest match)."""
    out = bytearray(b"\x01")
    for start in range(0, len(data), 4096):
        end = min(start + 4096, len(data))
        body = _compress_chunk(data, start, end)
        if len(body) <= 4096:
            out += struct.pack("<H", 0xB000 | (len(body) - 1)) + body  # size - 3, incl. header
        elif end - start == 4096:  # incompressible: stored raw, exactly 4096 bytes
            out += struct.pack("<H", 0x3000 | 4095) + data[start:end]
        else:
            raise ValueError("an incompressible last chunk cannot be stored")
    return bytes(out)


def decompress(container: bytes) -> bytes:
    """Inverse of :func:`compress` for any valid container (2.4.1.3.2)."""
    if container[:1] != b"\x01":
        raise ValueError("not an MS-OVBA compressed container")
    out = bytearray()
    pos = 1
    while pos < len(container):
        header = struct.unpack_from("<H", container, pos)[0]
        size, compressed = (header & 0x0FFF) + 3, header & 0x8000
        chunk, pos = container[pos + 2 : pos + size], pos + size
        start = len(out)
        if not compressed:
            out += chunk
            continue
        i = 0
        while i < len(chunk):
            flags, i = chunk[i], i + 1
            for bit in range(8):
                if i >= len(chunk):
                    break
                if not flags >> bit & 1:
                    out.append(chunk[i])
                    i += 1
                    continue
                token = struct.unpack_from("<H", chunk, i)[0]
                i += 2
                bit_count, _ = _copy_token_help(len(out) - start)
                length = (token & (0xFFFF >> bit_count)) + 3
                offset = (token >> (16 - bit_count)) + 1
                for _ in range(length):
                    out.append(out[-offset])
    return bytes(out)


# --------------------------------------------------------------------------- project streams


def _record(record_id: int, payload: bytes) -> bytes:
    return struct.pack("<HI", record_id, len(payload)) + payload


def _module_record(name: str, codepage: str) -> bytes:
    mbcs, utf16 = name.encode(codepage), name.encode("utf-16-le")
    return b"".join(
        [
            _record(0x0019, mbcs),  # MODULENAME
            _record(0x0047, utf16),  # MODULENAMEUNICODE
            _record(0x001A, mbcs) + _record(0x0032, utf16),  # MODULESTREAMNAME
            _record(0x001C, b"") + _record(0x0048, b""),  # MODULEDOCSTRING
            _record(0x0031, struct.pack("<I", 0)),  # MODULEOFFSET: source starts at byte 0
            _record(0x001E, struct.pack("<I", 0)),  # MODULEHELPCONTEXT
            _record(0x002C, struct.pack("<H", 0xFFFF)),  # MODULECOOKIE
            struct.pack("<HI", 0x0021, 0),  # MODULETYPE: procedural (standard) module
            struct.pack("<HI", 0x002B, 0),  # Terminator
        ]
    )


def _codepage(dir_stream: bytes) -> str:
    at = dir_stream.find(b"\x03\x00\x02\x00\x00\x00")  # PROJECTCODEPAGE
    if at < 0:
        raise ValueError("the dir stream has no PROJECTCODEPAGE record")
    return f"cp{struct.unpack_from('<H', dir_stream, at + 6)[0]}"


def _add_to_dir(dir_stream: bytes, name: str) -> bytes:
    marker = b"\x0f\x00\x02\x00\x00\x00"  # PROJECTMODULES, Size 2
    at = dir_stream.find(marker)
    end = b"\x10\x00\x00\x00\x00\x00"  # dir terminator
    if at < 0 or not dir_stream.endswith(end):
        raise ValueError("the dir stream does not have the expected layout")
    count = struct.unpack_from("<H", dir_stream, at + 6)[0]
    return (
        dir_stream[: at + 6]
        + struct.pack("<H", count + 1)
        + dir_stream[at + 8 : -len(end)]
        + _module_record(name, _codepage(dir_stream))
        + end
    )


def add_module(vba_project: bytes, name: str, source: str) -> bytes:
    """A copy of ``vba_project`` (the bytes of a ``vbaProject.bin``) with one more module.

    Parameters
    ----------
    vba_project : bytes
        An existing project without a performance cache (xlwings' templates are such).
    name : str
        Module name: letters, digits and underscores, starting with a letter, unused so far.
    source : str
        The module's code; an ``Attribute VB_Name`` line is put in front of it.

    Returns
    -------
    bytes
        The new ``vbaProject.bin``.
    """
    if not (name[:1].isalpha() and name.replace("_", "").isalnum() and name.isascii()):
        raise ValueError(f"not a VBA module name: {name!r}")
    streams = _streams(vba_project)
    if streams.get("VBA/_VBA_PROJECT") != SOURCE_ONLY_VBA_PROJECT:
        raise ValueError(
            "the project carries compiled code; only source-only projects are supported"
        )
    if any(path.lower() == f"vba/{name.lower()}" for path in streams):
        raise ValueError(f"the project already has a stream named {name}")
    dir_stream = decompress(streams["VBA/dir"])
    codepage = _codepage(dir_stream)
    code = f'Attribute VB_Name = "{name}"\r\n' + source.replace("\r\n", "\n").replace("\n", "\r\n")
    streams[f"VBA/{name}"] = compress(code.encode(codepage))
    streams["VBA/dir"] = compress(_add_to_dir(dir_stream, name))
    project = streams["PROJECT"].decode(codepage)
    last = project.rfind("Module=")
    if last < 0:
        raise ValueError("the PROJECT stream lists no standard module")
    line_end = project.index("\r\n", last) + 2
    project = project[:line_end] + f"Module={name}\r\n" + project[line_end:]
    # The VBA editor lists every module under [Workspace] (window position; all zero and "C"
    # for a closed window, as the template's own closed modules are).
    head, section, windows = project.partition("\r\n[Workspace]\r\n")
    if section:
        listed = windows.rstrip("\r\n")  # the template ends the stream with an empty line
        entry = f"{name}=0, 0, 0, 0, C"
        windows = (listed + "\r\n" + entry if listed else entry) + windows[len(listed) :]
        project = head + section + windows
    streams["PROJECT"] = project.encode(codepage)
    wm = streams["PROJECTwm"]
    if not wm.endswith(b"\x00\x00"):
        raise ValueError("the PROJECTwm stream has no terminator")
    entry = name.encode(codepage) + b"\x00" + name.encode("utf-16-le") + b"\x00\x00"
    streams["PROJECTwm"] = wm[:-2] + entry + b"\x00\x00"
    return write_compound_file(streams)


def _streams(vba_project: bytes) -> dict[str, bytes]:
    ole = olefile.OleFileIO(vba_project)
    try:
        return {
            "/".join(path): ole.openstream("/".join(path)).read()
            for path in ole.listdir(streams=True)
        }
    finally:
        ole.close()


def _module_offset(dir_stream: bytes, name: str, codepage: str) -> int:
    """MODULEOFFSET of a module: where its compressed source starts in its stream."""
    stream_name = _record(0x001A, name.encode(codepage))  # MODULESTREAMNAME
    at = dir_stream.find(stream_name)
    offset_record = b"\x31\x00\x04\x00\x00\x00"  # MODULEOFFSET, Size 4
    found = dir_stream.find(offset_record, at) if at >= 0 else -1
    if found < 0:
        raise ValueError(f"the dir stream lists no module {name!r}")
    return struct.unpack_from("<I", dir_stream, found + len(offset_record))[0]


def replace_in_module(vba_project: bytes, name: str, old: str, new: str) -> bytes:
    """A copy of ``vba_project`` with one line of module ``name``'s source replaced.

    Parameters
    ----------
    vba_project : bytes
        A project without a performance cache whose module ``name`` is source only
        (``MODULEOFFSET`` 0), as every module of xlwings' templates is.
    name : str
        The module.
    old, new : str
        ``old`` must occur exactly once in the source; it becomes ``new``.

    Returns
    -------
    bytes
        The new ``vbaProject.bin``; every other stream is unchanged.
    """
    streams = _streams(vba_project)
    if streams.get("VBA/_VBA_PROJECT") != SOURCE_ONLY_VBA_PROJECT:
        raise ValueError(
            "the project carries compiled code; only source-only projects are supported"
        )
    dir_stream = decompress(streams["VBA/dir"])
    codepage = _codepage(dir_stream)
    if _module_offset(dir_stream, name, codepage) != 0:
        raise ValueError(f"module {name!r} carries compiled code before its source")
    source = decompress(streams[f"VBA/{name}"]).decode(codepage)
    if not source.startswith(f'Attribute VB_Name = "{name}"'):
        raise ValueError(f"the stream of module {name!r} does not hold its source")
    if source.count(old) != 1:
        raise ValueError(f"module {name!r} holds {source.count(old)} copies of {old!r}, not 1")
    streams[f"VBA/{name}"] = compress(source.replace(old, new).encode(codepage))
    return write_compound_file(streams)


def module_source(vba_project: bytes, name: str) -> str:
    """The source of a source-only module (tests and checks read the built add-in with it)."""
    streams = _streams(vba_project)
    dir_stream = decompress(streams["VBA/dir"])
    codepage = _codepage(dir_stream)
    if _module_offset(dir_stream, name, codepage) != 0:
        raise ValueError(f"module {name!r} carries compiled code before its source")
    return decompress(streams[f"VBA/{name}"]).decode(codepage)


# --------------------------------------------------------------------------- MS-CFB (version 3)


def _sort_key(name: str) -> tuple[int, str]:
    # MS-CFB 2.6.4: shorter names first, then by upper-case comparison.
    return (len(name), name.upper())


def write_compound_file(streams: dict[str, bytes]) -> bytes:
    """A version-3 compound file holding ``streams`` (``"storage/stream"`` paths, one level).

    Streams under 4096 bytes live in the mini stream, as MS-CFB requires; sibling entries form
    a size-balanced binary search tree coloured as a valid red-black tree; all timestamps and
    CLSIDs are zero, so equal input gives equal bytes.
    """
    # Directory: root, then storages and streams in a fixed order.
    entries: list[dict] = [{"name": "Root Entry", "type": 5, "kids": []}]
    storages: dict[str, int] = {}
    for path in sorted(streams, key=lambda p: [_sort_key(x) for x in p.split("/")]):
        parts = path.split("/")
        if len(parts) > 2:
            raise ValueError(f"only one storage level is supported: {path}")
        parent = 0
        if len(parts) == 2:
            if parts[0] not in storages:
                storages[parts[0]] = len(entries)
                entries.append({"name": parts[0], "type": 1, "kids": []})
                entries[0]["kids"].append(storages[parts[0]])
            parent = storages[parts[0]]
        entries[parent]["kids"].append(len(entries))
        entries.append({"name": parts[-1], "type": 2, "data": streams[path], "kids": []})

    # Sibling trees.
    for entry in entries:
        entry.update(left=NOSTREAM, right=NOSTREAM, child=NOSTREAM, color=1)
    for entry in entries:
        kids = sorted(entry["kids"], key=lambda i: _sort_key(entries[i]["name"]))
        if kids:
            depth_of: dict[int, int] = {}
            entry["child"] = _balanced(kids, entries, 0, depth_of)
            deepest = max(depth_of.values())
            for index, depth in depth_of.items():
                entries[index]["color"] = 0 if depth == deepest > 0 else 1  # red on the last level

    # Mini stream (small streams) and regular streams.
    mini = bytearray()
    minifat: list[int] = []
    big: list[tuple[int, bytes]] = []
    for index, entry in enumerate(entries):
        data = entry.get("data")
        if data is None:
            continue
        entry["size"] = len(data)
        if not data:
            entry["start"] = ENDOFCHAIN
        elif len(data) < MINI_CUTOFF:
            first = len(mini) // MINI_SECTOR
            count = -(-len(data) // MINI_SECTOR)
            entry["start"] = first
            minifat += [first + k + 1 for k in range(count - 1)] + [ENDOFCHAIN]
            mini += data + b"\x00" * (count * MINI_SECTOR - len(data))
        else:
            big.append((index, data))

    sectors: list[bytes] = []
    fat: list[int] = []

    def place(data: bytes) -> int:
        count = -(-len(data) // SECTOR)
        first = len(sectors)
        for k in range(count):
            sectors.append(data[k * SECTOR : (k + 1) * SECTOR].ljust(SECTOR, b"\x00"))
            fat.append(first + k + 1 if k < count - 1 else ENDOFCHAIN)
        return first

    for index, data in big:
        entries[index]["start"] = place(data)
    entries[0]["start"], entries[0]["size"] = (
        (place(bytes(mini)), len(mini))
        if mini
        else (
            ENDOFCHAIN,
            0,
        )
    )
    minifat_bytes = struct.pack(f"<{len(minifat)}I", *minifat)
    minifat_bytes += struct.pack("<I", FREESECT) * (-len(minifat) % (SECTOR // 4))
    first_minifat = place(minifat_bytes) if minifat else ENDOFCHAIN
    minifat_sectors = len(minifat_bytes) // SECTOR if minifat else 0
    directory = b"".join(_dir_entry(e) for e in entries)
    directory += _dir_entry(None) * (-len(entries) % (SECTOR // 128))
    first_directory = place(directory)

    # FAT sectors: enough to describe every sector, themselves included.
    fat_count = 1
    while fat_count * (SECTOR // 4) < len(sectors) + fat_count:
        fat_count += 1
    if fat_count > 109:
        raise ValueError("file too large for a header-only DIFAT")
    fat_first = len(sectors)
    fat += [FATSECT] * fat_count
    fat += [FREESECT] * (fat_count * (SECTOR // 4) - len(fat))
    fat_bytes = struct.pack(f"<{len(fat)}I", *fat)
    for k in range(fat_count):
        sectors.append(fat_bytes[k * SECTOR : (k + 1) * SECTOR])

    difat = [fat_first + k for k in range(fat_count)] + [FREESECT] * (109 - fat_count)
    header = (
        bytes.fromhex("d0cf11e0a1b11ae1")
        + b"\x00" * 16
        + struct.pack("<HHHHH", 0x003E, 0x0003, 0xFFFE, 9, 6)
        + b"\x00" * 6
        + struct.pack(
            "<IIIIIIIII",
            0,  # directory sectors: always 0 in version 3
            fat_count,
            first_directory,
            0,  # transaction signature
            MINI_CUTOFF,
            first_minifat,
            minifat_sectors,
            ENDOFCHAIN,  # no DIFAT sectors
            0,
        )
        + struct.pack("<109I", *difat)
    )
    return header + b"".join(sectors)


def _balanced(kids: list[int], entries: list[dict], depth: int, depth_of: dict[int, int]) -> int:
    if not kids:
        return NOSTREAM
    middle = len(kids) // 2
    index = kids[middle]
    depth_of[index] = depth
    entries[index]["left"] = _balanced(kids[:middle], entries, depth + 1, depth_of)
    entries[index]["right"] = _balanced(kids[middle + 1 :], entries, depth + 1, depth_of)
    return index


def _dir_entry(entry: dict | None) -> bytes:
    if entry is None:  # an unused slot
        return (
            b"\x00" * 64
            + struct.pack("<HBBIII", 0, 0, 0, NOSTREAM, NOSTREAM, NOSTREAM)
            + (b"\x00" * 48)
        )
    name = entry["name"].encode("utf-16-le")
    if len(name) > 62:
        raise ValueError(f"entry name too long: {entry['name']}")
    return (
        (name + b"\x00\x00").ljust(64, b"\x00")
        + struct.pack(
            "<HBBIII",
            len(name) + 2,
            entry["type"],
            entry["color"],
            entry["left"],
            entry["right"],
            entry["child"],
        )
        + b"\x00" * 16  # CLSID
        + b"\x00" * 4  # state bits
        + b"\x00" * 16  # creation and modification time
        + struct.pack(
            "<IQ", entry.get("start", ENDOFCHAIN if entry["type"] != 1 else 0), entry.get("size", 0)
        )
    )
