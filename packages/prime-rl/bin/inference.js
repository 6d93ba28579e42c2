#!/usr/bin/env node
// Launcher kept in git so npm can link the bin before the TypeScript build has run.
import '../dist/src/bin/inference.js';
