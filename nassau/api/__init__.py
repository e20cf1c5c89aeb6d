"""The Python API: check and run a request (`request`), the resolved module every command works from
(`resolved`), Ext and its charts (`ext`, `chart_data`), progress on stderr or in a notebook. Imports everything
below it and charts."""
