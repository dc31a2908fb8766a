"""Dates as a reader writes them, not as ISO 8601 stamps: on the front page, a post's page and in
the queries' results (the JSON and CSV keep the stamps)."""

from datetime import date

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def long_date(value: str | None) -> str:
    """An ISO 8601 date or time as a reader writes a date (``2024-03-12T08:00:00Z``: 12 March 2024);
    "date unknown" when there is none, the value itself when it is no date."""
    if not value:
        return "date unknown"
    try:
        day = date.fromisoformat(value[:10])
    except ValueError:
        return value
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def long_time(value: str | None) -> str:
    """An ISO 8601 time in UTC as a reader writes it (``2026-12-07T03:13:27Z``: 7 December 2026, 03:13 UTC);
    "never" when there is none."""
    if not value:
        return "never"
    clock = value[11:16] if len(value) >= 16 and value[10] in "T " else ""
    return long_date(value) + (f", {clock} UTC" if clock else "")
