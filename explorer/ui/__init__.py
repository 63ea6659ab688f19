"""The blocks the pages draw with (Streamlit): shell, sidebar and router, panels, present, share, the build view, the map component."""
