def parse_line(text):
    if '=' not in text:
        raise ValueError(f"no '=' in {text!r}")
    key, value = text.split('=', 1)
    return key.strip(), int(value)


def parse_all(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = parse_line(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


class Queue:
    def __init__(self, limit=None):
        self.items = []
        self.limit = limit

    def enqueue(self, x):
        if self.limit is not None and len(self.items) >= self.limit:
            raise OverflowError(f"queue is full ({self.limit})")
        self.items.append(x)

    def dequeue(self):
        if not self.items:
            raise IndexError("dequeue from an empty queue")
        return self.items.pop(0)

    def is_empty(self):
        return not self.items


settings, problems = parse_all(['closed=', 'open', 'fast'])
print(settings)
print(f"{len(problems)} bad lines")
q = Queue(3)
for x in ['beta', 'delta', 'red']:
    try:
        q.enqueue(x)
    except OverflowError as e:
        print(e)
done = []
for _ in range(4):
    try:
        done.append(q.dequeue())
    except IndexError as e:
        print(f"stopped: {e}")
        break
print(done)
