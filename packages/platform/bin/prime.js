#!/usr/bin/env node
// Launcher committed to the repository so that npm can link the `prime` bin before the first build.
import '../dist/src/bin/prime.js';
