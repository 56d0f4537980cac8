#!/usr/bin/env python3
"""Regenerates src/lib/tzdb-names.ts from the tz database's tzdata.zi (Debian: package tzdata).
usage: python3 scripts/tzdb-names.py [/usr/share/zoneinfo/tzdata.zi]"""
import sys
source = sys.argv[1] if len(sys.argv) > 1 else '/usr/share/zoneinfo/tzdata.zi'
version, names = '?', set()
for line in open(source):
    parts = line.split()
    if line.startswith('# version'):
        version = parts[2]
    elif parts and parts[0] == 'Z':
        names.add(parts[1])
    elif parts and parts[0] == 'L':
        names.add(parts[2])
names.discard('Factory')  # zic's placeholder, not a place
groups = {}
for name in sorted(names):
    area, _, rest = name.partition('/')
    groups.setdefault(area if rest else '', []).append(rest or name)
out = [
    '/**',
    f' * Every time zone name of the IANA tz database ({version}: its zones and links, `backward` included),',
    ' * generated from tzdata.zi by scripts/tzdb-names.py. A name Intl also knows but the tz database does',
    " * not (ICU keeps Java's old three-letter ids: CST, JST, PST, IST...) is not a zone name, and",
    ' * chatlog refuses it rather than guess which zone it means.',
    ' */',
    'export const TZDB_NAMES_BY_AREA: Readonly<Record<string, string>> = {',
]
for area, rest in groups.items():
    key = "''" if area == '' else (area if area.isidentifier() else repr(area))
    out.append(f"  {key}: '{' '.join(rest)}',")
out.append('};')
open('src/lib/tzdb-names.ts', 'w').write('\n'.join(out) + '\n')
print(f'{len(names)} names from tz {version}')
