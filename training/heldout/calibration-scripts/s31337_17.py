class Ticket:
    MOVES = {'open': ['doing'], 'doing': ['done', 'open'], 'done': ['doing']}

    def __init__(self, name):
        self.name = name
        self.state = 'open'
        self.log = []

    def go(self, new):
        if new not in self.MOVES[self.state]:
            raise RuntimeError(f"{self.name}: cannot go from {self.state} to {new}")
        self.log.append((self.state, new))
        self.state = new
        return self

    def __repr__(self):
        return f"Ticket(name={self.name!r}, state={self.state!r})"


def average(scores):
    if not scores:
        raise ValueError("average of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 85:
        return 'A'
    elif score >= 57:
        return 'B'
    elif score >= 51:
        return 'C'
    return 'D'


def main():
    ticket = Ticket('alpha')
    for target in ['doing', 'open']:
        try:
            ticket.go(target)
        except RuntimeError as e:
            print(e)
    print(ticket)
    scores = {'eli': [68, 69, 54], 'noa': [41, 53], 'gus': [93], 'ivo': [48]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(average(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(report)


if __name__ == "__main__":
    main()
