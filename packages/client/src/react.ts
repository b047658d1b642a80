import {
  createContext,
  createElement,
  type ReactElement,
  type ReactNode,
  useContext,
  useSyncExternalStore,
} from 'react';
import type { PosternClient } from './client.js';
import type { Session } from './types.js';

const ClientContext = createContext<PosternClient | null>(null);

/** Makes `client` available to `useClient()` and `useSession()` below it. */
export function PosternProvider(props: { client: PosternClient; children?: ReactNode }): ReactElement {
  return createElement(ClientContext.Provider, { value: props.client }, props.children);
}

export function useClient(): PosternClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useClient: render inside <PosternProvider client={...}>');
  return client;
}

/** The session; the component renders again when it changes (sign-in or out in any tab). */
export function useSession(): Session {
  const client = useClient();
  return useSyncExternalStore(client.subscribe, client.getSession, client.getSession);
}
