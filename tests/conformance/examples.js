'use strict';
// One request per format that its provider accepts (the rule checker passes
// it and the SDK types take it): the starting point of the checker's tests.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

const good = {
  'openai.chat': {
    messages: [
      { role: 'developer', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'list the files please' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'k1', type: 'function', function: { name: 'ls', arguments: '{}' } }, { id: 'k2', type: 'function', function: { name: 'pwd', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'k2', content: '/src' },
      { role: 'tool', tool_call_id: 'k1', content: 'a.c' },
    ],
  },
  'openai.responses': {
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list the files please' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' }] },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc' },
      { type: 'function_call', call_id: 'k1', name: 'ls', arguments: '{}' },
      { type: 'function_call_output', call_id: 'k1', output: 'a.c' },
    ],
  },
  'anthropic.messages': {
    system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'text', text: 'list the files please' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'ls it', signature: 'sig' }, { type: 'tool_use', id: 'k1', name: 'ls', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'k1', content: 'a.c' }, { type: 'text', text: '<context>\nplan: x\n</context>' }] },
    ],
  },
  'gemini.generate_content': {
    system_instruction: { parts: [{ text: 'be brief' }] },
    // JSON Schema parameters go in parametersJsonSchema; parameters is
    // Gemini's own Schema (https://ai.google.dev/api/caching#FunctionDeclaration).
    tools: [{ function_declarations: [{ name: 'ls', description: 'list files', parametersJsonSchema: { type: 'object', properties: {} } }] }],
    contents: [
      { role: 'user', parts: [{ text: 'list the files please' }, { inline_data: { mime_type: 'image/png', data: PNG } }] },
      { role: 'model', parts: [{ functionCall: { id: 'k1', name: 'ls', args: {} }, thoughtSignature: 'sig' }] },
      { role: 'user', parts: [{ functionResponse: { id: 'k1', name: 'ls', response: { output: 'a.c' } } }] },
    ],
  },
  'ai.sdk': {
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'list the files please' }, { type: 'image', image: PNG, mediaType: 'image/png' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'ls it' }, { type: 'tool-call', toolCallId: 'k1', toolName: 'ls', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'k1', toolName: 'ls', output: { type: 'text', value: 'a.c' } }] },
    ],
  },
};

module.exports = { PNG, good };
