// shared code lives here; the importer skips this directory
