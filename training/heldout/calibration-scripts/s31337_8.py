from dataclasses import dataclass


@dataclass
class Point:
    x: int
    y: int

    def moved(self, dx, dy):
        return Point(self.x + dx, self.y + dy)

    def dist2(self, other):
        return (self.x - other.x) ** 2 + (self.y - other.y) ** 2


def walk(start, steps):
    here = start
    visited = [here]
    for dx, dy in steps:
        here = here.moved(dx, dy)
        visited.append(here)
    return visited


def main():
    origin = Point(-1, 2)
    trail = walk(origin, [(3, 2), (-2, 3)])
    last = trail[-1]
    print(len(trail))


if __name__ == "__main__":
    main()
