"""The Streamlit glue of ToG Explorer: the frame (`shell`: page config and sidebar), the open project and its cached
graph (`projects`), settings, engines and pictures (`ui`), and the blocks the pages share (`blocks`). app.py and
pages/*.py import it; tog_core never does."""
