def read_setting(text):
    if ':' not in text:
        raise ValueError(f"no ':' in {text!r}")
    key, value = text.split(':', 1)
    return key.strip(), int(value)


def load(lines):
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


class EmptyError(Exception):
    pass


class Stack:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def enqueue(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"stack is full ({self.limit})")
        self.items.append(x)

    def dequeue(self):
        if not self.items:
            raise EmptyError("dequeue from an empty stack")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items

    def __repr__(self):
        return f"Stack({self.items})"


settings, problems = load(['green:81', 'gamma', 'south:4.5'])
print(settings)
print(f"{len(problems)} bad lines")
tasks = Stack(5)
for x in ['fast', 'beta', 'delta', 'north']:
    try:
        tasks.enqueue(x)
    except OverflowError as e:
        print(e)
done = []
for _ in range(4):
    try:
        done.append(tasks.dequeue())
    except EmptyError as e:
        print(f"stopped: {e}")
        break
print(done)
