from dataclasses import dataclass


@dataclass
class Product:
    name: str
    price: float
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Inventory:
    def __init__(self):
        self.items = []

    def put(self, item):
        self.items.append(item)
        return item

    def drop(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        t = 0
        for item in self.items:
            t += item.cost()
        return t

    def __repr__(self):
        return f"Inventory(items={self.items!r})"


def average(scores):
    if not scores:
        raise ValueError("average of no scores")
    return sum(scores) / len(scores)


def letter(score):
    if score >= 89:
        return 'A'
    elif score >= 85:
        return 'B'
    elif score >= 63:
        return 'C'
    return 'D'


def main():
    basket = Inventory()
    for name, price, qty in [('kiwi', 0.6, 2), ('milk', 4.0, 2), ('pen', 5.0, 3)]:
        basket.put(Product(name, price, qty))
    basket.put(Product('kiwi', 1.9, 2))
    try:
        removed = basket.drop('milk')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(f"total: {basket.total()}")
    scores = {'jo': [47, 84], 'lu': [42, 66, 51], 'kim': [68], 'ivo': [80, 51]}
    report = {}
    for name, marks in scores.items():
        try:
            report[name] = letter(average(marks))
        except ValueError as e:
            print(f"{name}: {e}")
            report[name] = None
    print(f"report: {report}")


main()
