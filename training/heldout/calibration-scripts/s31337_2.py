class Pos:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Pos(x={self.x!r}, y={self.y!r})"

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


def main():
    origin = Pos(-2, 2)
    trail = walk(origin, [(-3, -2), (-3, -1), (3, -3)])
    far = max(trail, key=lambda p: p.dist2(origin))
    print(len(trail))


if __name__ == "__main__":
    main()
