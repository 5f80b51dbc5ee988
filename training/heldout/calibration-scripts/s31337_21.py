from dataclasses import dataclass


@dataclass
class Product:
    name: str
    price: int
    qty: int = 1

    def cost(self):
        return self.price * self.qty


class Cart:
    def __init__(self):
        self.items = []

    def add_item(self, item):
        for existing in self.items:
            if existing.name == item.name:
                existing.qty += item.qty
                return existing
        self.items.append(item)
        return item

    def remove_item(self, name):
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
        return f"Cart(items={self.items!r})"


def main():
    stock = Cart()
    for name, price, qty in [('yogurt', 2, 3), ('rice', 8, 4), ('lemon', 9, 1)]:
        stock.add_item(Product(name, price, qty))
    try:
        removed = stock.remove_item('lemon')
        print(f"removed {removed}")
    except KeyError as e:
        print(f"no such item: {e}")
    print(stock)
    names = [item.name for item in stock.items]
    print(names)


if __name__ == "__main__":
    main()
