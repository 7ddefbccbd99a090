'use strict';
// The rule checker of every provider format ctxdb compiles to: check(format,
// body) lists the broken rules, [] when the request is one the provider
// accepts. Each rule is written from the provider's documentation and cites
// its page where it is defined.
const checkers = {
  'openai.chat': require('./openai_chat').check,
  'openai.responses': require('./openai_responses').check,
  'anthropic.messages': require('./anthropic_messages').check,
  'gemini.generate_content': require('./gemini_generate_content').check,
  'ai.sdk': require('./ai_sdk').check,
};

const FORMATS = Object.keys(checkers);

function check(format, body) {
  const fn = checkers[format];
  if (!fn) throw new Error(`no checker for format ${format}`);
  return fn(body);
}

module.exports = { check, FORMATS };
