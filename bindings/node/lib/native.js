'use strict';
// The loaded and ABI-checked native addon (see loader.js).
module.exports = require('./loader').load();
