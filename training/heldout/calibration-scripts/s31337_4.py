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


def main():
    origin = Vector(-1, -2)
    trail = route(origin, [(-3, -2), (0, 1), (3, -1), (3, 3)])
    far = max(trail, key=lambda p: p.dist2(origin))
    print(len(trail))


if __name__ == "__main__":
    main()
