from dataclasses import dataclass


@dataclass
class Pos:
    x: int
    y: int

    def moved(self, dx, dy):
        return Pos(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def walk(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


origin = Pos(1, -2)
trail = walk(origin, [(3, -1), (-3, -3)])
far = max(trail, key=lambda p: p.dist2(origin))
print(trail)
