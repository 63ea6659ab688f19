"""The app's state: loading built corpora, filters as masks, URL state, reading lists, tours, uploads, access."""
