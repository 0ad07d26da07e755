"""The venue's time: its clock (wall time and exact instants in the venue's zone), its
opening hours, a row's moments read from the row, its links, settings and hours, and the
words a screen says for a moment. Below it only the manifest; it reads no database."""
