def split_entry(text):
    if ',' not in text:
        raise ValueError(f"no ',' in {text!r}")
    key, value = text.split(',', 1)
    return key.strip(), int(value)


def parse_all(lines):
    result = {}
    errors = []
    for line in lines:
        try:
            key, value = split_entry(line)
        except ValueError as e:
            errors.append(str(e))
            continue
        result[key] = value
    return result, errors


class Wallet:
    def __init__(self, owner, funds=0):
        self.owner = owner
        self.funds = funds
        self.history = []

    def deposit(self, value):
        self.funds += value
        self.history.append(('deposit', value))
        return self.funds

    def withdraw(self, value):
        if value > self.funds:
            raise ValueError(f"cannot withdraw {value}, only {self.funds} left")
        self.funds -= value
        self.history.append(('withdraw', value))
        return self.funds

    def __repr__(self):
        return f"Wallet({self.owner!r}, {self.funds!r})"


def main():
    settings, problems = parse_all(['delta,53', 'red,92', 'south', 'open'])
    print(settings)
    print(f"{len(problems)} bad lines")
    acct = Wallet('eli', 50)
    try:
        acct.deposit(-6)
    except Exception as e:
        print(f"deposit -6 failed: {e}")
    try:
        acct.withdraw(25)
    except Exception as e:
        print(f"withdraw 25 failed: {e}")
    try:
        acct.deposit(2)
    except ValueError as e:
        print(f"deposit 2 failed: {e}")
    print(f"{acct.owner} has {acct.funds}")
    print(len(acct.history))


if __name__ == "__main__":
    main()
