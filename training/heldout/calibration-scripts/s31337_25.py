from dataclasses import dataclass


@dataclass
class Vector:
    x: int
    y: int

    def moved(self, dx, dy):
        return Vector(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def route(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


def read_setting(text):
    if ':' not in text:
        raise ValueError(f"no ':' in {text!r}")
    key, value = text.split(':', 1)
    return key.strip(), int(value)


def parse_all(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = read_setting(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


origin = Vector(1, 2)
trail = route(origin, [(1, 2), (-2, 2), (-3, 1)])
far = max(trail, key=lambda p: p.dist2(origin))
print(trail)
settings, problems = parse_all(['alpha', 'blue'])
print(settings)
for p in problems:
    print(p)
