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
        return f"Light(name={self.name!r}, state={self.state!r})"


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


light = Light('closed')
for target in ['off', 'broken']:
    try:
        light.go(target)
    except RuntimeError as e:
        print(e)
print(light)
settings, problems = parse_all(['red:47', 'delta:30', 'gamma:60'])
print(settings)
for p in problems:
    print(p)
