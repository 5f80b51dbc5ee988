class Light:
    MOVES = {'off': ['on'], 'on': ['broken', 'off'], 'broken': ['on']}

    def __init__(self, name):
        self.name = name
        self.state = 'off'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Light({self.name}, {self.state})"


light = Light('blue')
for target in ['off', 'broken', 'broken', 'off']:
    try:
        light.go(target)
    except RuntimeError as e:
        print(e)
print(light)
