class Door:
    MOVES = {'closed': ['open'], 'open': ['locked', 'closed'], 'locked': ['open']}

    def __init__(self, name):
        self.name = name
        self.state = 'closed'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Door({self.name!r}, {self.state!r})"


door = Door('blue')
for target in ['locked', 'locked', 'locked', 'locked']:
    try:
        door.go(target)
    except RuntimeError as e:
        print(e)
print(f"{door.name} is {door.state}")
