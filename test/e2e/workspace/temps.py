def to_fahrenheit(celsius: float) -> float:
    """Celsius to Fahrenheit.

    >>> to_fahrenheit(100)
    212.0
    """
    ...


def main():
    for c in [100, 37]:
        f = to_fahrenheit(c)
        print(c, f)


main()
