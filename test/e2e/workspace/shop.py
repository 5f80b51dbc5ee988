import textkit_missing


def parse_price(text):
    """'$3.50' -> 3.5"""
    raise NotImplementedError


def main():
    p = parse_price("$2.50")
    q = p
    slug = textkit_missing.slugify("Hi There")
    return q, slug
