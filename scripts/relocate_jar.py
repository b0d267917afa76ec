"""Relocate a Java package inside jars, deterministically (a tiny jarjar / shade).

Usage: relocate_jar.py OUT.jar FROM_PACKAGE TO_PACKAGE IN.jar [IN.jar ...]

Iceberg's Spark runtime expects Jackson under ``org.apache.iceberg.shaded``; this
builds that jar from plain Jackson jars. Class files get their constant pool
rewritten: every Utf8 entry (internal names, descriptors, signatures, and the
dotted names used by reflection) has the package prefix replaced. Service files
under ``META-INF/services`` are renamed and rewritten the same way. ``module-info``
classes, ``META-INF/versions`` and signatures are dropped. The output is
reproducible: entries sorted by name, stored uncompressed, fixed timestamps and
permissions.
"""

from __future__ import annotations

import struct
import sys
import zipfile

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
CLASS_MAGIC = 0xCAFEBABE
# Constant pool tags -> size of the entry after the tag byte (Utf8 is variable).
FIXED_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2}
FIXED_SIZES.update({17: 4, 18: 4, 19: 2, 20: 2})
UTF8, LONG, DOUBLE = 1, 5, 6


class Relocation:
    """Replaces one package prefix in internal (``a/b/``) and dotted (``a.b.``) form."""

    def __init__(self, source: str, target: str) -> None:
        self.pairs = [
            (source.replace(".", "/").encode() + b"/", target.replace(".", "/").encode() + b"/"),
            (source.encode() + b".", target.encode() + b"."),
        ]

    def bytes(self, value: bytes) -> bytes:
        for old, new in self.pairs:
            value = value.replace(old, new)
        return value

    def path(self, name: str) -> str:
        return self.bytes(name.encode()).decode()


def relocate_class(data: bytes, relocation: Relocation) -> bytes:
    """The class file with every Utf8 constant relocated; everything else byte-identical."""
    magic, _minor, _major, count = struct.unpack_from(">IHHH", data, 0)
    if magic != CLASS_MAGIC:
        raise ValueError("not a class file")
    out = bytearray(data[:10])
    pos, index = 10, 1
    while index < count:
        tag = data[pos]
        if tag == UTF8:
            (length,) = struct.unpack_from(">H", data, pos + 1)
            value = relocation.bytes(data[pos + 3 : pos + 3 + length])
            if len(value) > 0xFFFF:
                raise ValueError("relocated constant exceeds 65535 bytes")
            out += bytes([UTF8]) + struct.pack(">H", len(value)) + value
            pos += 3 + length
        elif tag in FIXED_SIZES:
            size = 1 + FIXED_SIZES[tag]
            out += data[pos : pos + size]
            pos += size
        else:
            raise ValueError(f"unknown constant pool tag {tag} at offset {pos}")
        index += 2 if tag in (LONG, DOUBLE) else 1
    out += data[pos:]
    return bytes(out)


def keep(name: str) -> bool:
    if name.endswith("/") or name.startswith("META-INF/versions/"):
        return False
    if name.endswith("module-info.class"):
        return False
    upper = name.upper()
    if upper == "META-INF/MANIFEST.MF" or upper.startswith("META-INF/MAVEN/"):
        return False
    return not upper.endswith((".SF", ".RSA", ".DSA"))


def relocate_jars(output: str, source: str, target: str, inputs: list[str]) -> int:
    relocation = Relocation(source, target)
    entries: dict[str, bytes] = {}
    for path in inputs:
        with zipfile.ZipFile(path) as jar:
            for info in jar.infolist():
                if not keep(info.filename):
                    continue
                data = jar.read(info)
                name = relocation.path(info.filename)
                if name.endswith(".class"):
                    data = relocate_class(data, relocation)
                elif name.startswith("META-INF/services/"):
                    data = relocation.bytes(data)
                elif name in entries:
                    # LICENSE/NOTICE shared by the Jackson jars: keep the first.
                    continue
                entries[name] = data
    manifest = b"Manifest-Version: 1.0\r\nCreated-By: glue-incremental relocate_jar.py\r\n\r\n"
    entries["META-INF/MANIFEST.MF"] = manifest
    # Stored, not deflated: the bytes then never depend on the machine's zlib version.
    with zipfile.ZipFile(output, "w", zipfile.ZIP_STORED) as jar:
        for name in sorted(entries, key=lambda n: (n != "META-INF/MANIFEST.MF", n)):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            jar.writestr(info, entries[name])
    return len(entries)


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    output, source, target, *inputs = argv
    count = relocate_jars(output, source, target, inputs)
    print(f"relocate_jar: {count} entries -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
