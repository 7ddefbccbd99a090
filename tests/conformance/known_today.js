'use strict';
// KNOWN_TODAY: the rules today's compiler and adapters still break, and the
// formats they do not compile to yet. The rules themselves are the spec and
// always run; a violation listed here is reported but does not fail the
// suite. A listed entry that no longer fires fails the suite, so the list
// only shrinks: empty it as the fixes land.
//
// rules: format -> rule ids; "compile" holds the rules on what compile
// itself must accept or refuse. sdkTypes: formats whose outputs do not
// type-check against the official SDK yet. formats: formats not compiled
// to yet (their checkers and type checks run as soon as they exist).
const KNOWN_TODAY = {
  formats: ['gemini.generate_content', 'ai.sdk'],
  rules: {
    compile: ['refuses-finished-answer', 'refuses-pending-call', 'accepts-tool-results'],
    'openai.chat': ['tool-call-answered', 'no-blank-text', 'request-once', 'images-delivered'],
    'openai.responses': ['tool-call-answered', 'no-blank-text', 'request-once', 'images-delivered',
      'thinking-replayed'],
    'anthropic.messages': ['tool-call-answered', 'no-blank-text', 'request-once', 'images-delivered',
      'thinking-replayed'],
  },
  sdkTypes: ['openai.responses'],
};

module.exports = { KNOWN_TODAY };
