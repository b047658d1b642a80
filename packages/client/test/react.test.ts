import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { expect, it } from 'vitest';
import { createClient } from '../src/index.js';
import { PosternProvider, useSession } from '../src/react.js';

function Status() {
  const session = useSession();
  return createElement('p', null, session.status);
}

it('useSession reads the session of the provider’s client', () => {
  const client = createClient({ baseUrl: 'http://127.0.0.1:9' });
  const html = renderToString(createElement(PosternProvider, { client }, createElement(Status)));
  expect(html).toBe('<p>signed-out</p>');
});

it('useSession outside a provider says what is missing', () => {
  expect(() => renderToString(createElement(Status))).toThrow(/PosternProvider/);
});
