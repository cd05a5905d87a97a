"""Real-browser tests: JupyterLab driven by Debian's chromium through Playwright."""
