from dataclasses import dataclass


@dataclass
class Line:
    name: str
    price: float
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Stock:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return item

    def remove(self, name):
        for i, item in enumerate(self.items):
            if item.name == name:
                return self.items.pop(i)
        raise KeyError(name)

    def total(self):
        return sum(item.cost() for item in self.items)

    def __repr__(self):
        return f"Stock(items={self.items!r})"


def main():
    basket = Stock()
    for name, price, qty in [('plate', 4.1, 2), ('yogurt', 5.24, 3), ('fork', 3.8, 3), ('eggs', 1.3, 2)]:
        basket.add(Line(name, price, qty))
    try:
        removed = basket.remove('eggs')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(round(basket.total(), 2))
    names = [item.name for item in basket.items]
    print(names)


if __name__ == "__main__":
    main()
