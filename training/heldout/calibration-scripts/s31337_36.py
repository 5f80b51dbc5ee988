def avg(scores):
    if not scores:
        raise ValueError("avg of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 90:
        return 'A'
    elif score >= 85:
        return 'B'
    elif score >= 56:
        return 'C'
    return 'D'


def main():
    scores = {'lu': [83, 65], 'kim': [67]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(avg(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(f"report: {report}")


if __name__ == "__main__":
    main()
