def mean(scores):
    if not scores:
        raise ValueError("mean of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 88:
        return 'A'
    elif score >= 64:
        return 'B'
    elif score >= 56:
        return 'C'
    return 'D'


def main():
    scores = {'gus': [94], 'dee': [43, 52], 'kim': [58]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(mean(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(f"report: {report}")


if __name__ == "__main__":
    main()
