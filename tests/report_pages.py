"""Read back what a report page shows, with the standard library's HTML parser: the tests check
the page a person sees, not the code that wrote it."""

from html.parser import HTMLParser


class ReportPage(HTMLParser):
    """The sections, headline cards, tables, figures and source lines of a report page.

    ``sections``: ``[(kind, title)]``; ``cards``: ``{section index: {label: text}}``;
    ``tables``: ``{caption: [[cell text]]}`` (the header row first, units dropped);
    ``figures``: ``[(section index, name)]``; ``source_lines``: ``[{"share", "title",
    "cells"}]``; ``tags``: every tag name seen; ``attributes``: every ``(tag, name, value)``.
    """

    def __init__(self, text):
        super().__init__()
        self.sections, self.cards, self.tables, self.figures = [], {}, {}, []
        self.source_lines, self.tags, self.attributes = [], set(), []
        self._stack, self._text, self._row, self._table = [], None, None, None
        self._label, self._card, self._caption, self._skip = None, None, None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.attributes += [(tag, name, value) for name, value in attrs.items()]
        classes = (attrs.get("class") or "").split()
        self._stack.append((tag, classes))
        if tag == "section" and "report" in classes:
            self.sections.append([attrs["data-kind"], None])
        elif tag == "h2" and self.sections and self.sections[-1][1] is None:
            self._text = []
        elif tag == "figure":
            self.figures.append((len(self.sections) - 1, attrs["data-figure"]))
        elif tag == "div" and "card" in classes:
            self._card = {"label": None, "value": None}
        elif tag == "div" and self._card is not None and ("label" in classes or "big" in classes):
            self._label = "label" if "label" in classes else "value"
            self._text = []
        elif tag == "table":
            self._table, self._caption = [], None
        elif tag == "caption":
            self._text = []
        elif tag == "tr" and self._table is not None:
            self._row = []
            if "src" in classes:
                self.source_lines.append({"share": float(attrs["data-share"]),
                                          "title": attrs["title"], "cells": self._row})
        elif tag in ("td", "th") and self._row is not None:
            self._text = []
        elif tag == "span" and "u" in classes and self._text is not None \
                and any(t in ("td", "th") for t, _ in self._stack[:-1]):
            self._skip = len(self._stack)

    def handle_endtag(self, tag):
        while self._stack:
            opened, classes = self._stack.pop()
            if self._skip == len(self._stack) + 1:
                self._skip = None
            if opened == tag:
                break
        text = "".join(self._text).strip() if self._text is not None else None
        if tag == "h2" and self.sections and self.sections[-1][1] is None and text is not None:
            self.sections[-1][1] = text
            self._text = None
        elif tag == "div" and self._label is not None:
            self._card[self._label] = " ".join(text.split())
            self._label, self._text = None, None
            if self._card["value"] is not None:
                self.cards.setdefault(len(self.sections) - 1, {})[self._card["label"]] = \
                    self._card["value"]
                self._card = None
        elif tag == "caption":
            self._caption, self._text = text, None
        elif tag in ("td", "th") and self._row is not None:
            self._row.append(" ".join(text.split()))
            self._text = None
        elif tag == "tr" and self._table is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table" and self._table is not None:
            self.tables[self._caption] = self._table
            self._table = None

    def handle_data(self, data):
        if self._text is not None and self._skip is None:
            self._text.append(data)
