// board without config.json
