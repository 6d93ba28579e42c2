export * from './difflib.js';
export * from './parsers/xml.js';
