"""The HIL suite runs with ``-p hil.plugin --embedded-services esp,idf`` (see docs/lab.md)."""
