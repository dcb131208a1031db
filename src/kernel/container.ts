import "reflect-metadata";
import { container as rootContainer, Lifecycle, type DependencyContainer } from "tsyringe";
import { describeToken, type Token } from "./token.ts";

/** A class whose every constructor parameter is decorated with `@inject(TOKEN)` (see DESIGN.md §3). */
export type InjectableClass<T> = new (...args: never[]) => T;

export type Binding<T> =
  | { useValue: T }
  | { useFactory: (container: ContainerFacade) => T }
  | { useClass: InjectableClass<T> };

export interface BindOptions {
  /** Replace an existing binding on purpose (tests, host overrides). */
  override?: boolean;
}

/**
 * The small surface plugins and adapters see instead of tsyringe itself, so the
 * container library stays replaceable behind this one file.
 */
export interface ContainerFacade {
  bind<T>(token: Token<T>, binding: Binding<T>, options?: BindOptions): void;
  resolve<T>(token: Token<T>): T;
  has(token: Token<unknown>): boolean;
}

export class DuplicateBindingError extends Error {
  constructor(readonly token: symbol) {
    super(`${describeToken(token).name} is already bound; pass { override: true } to replace it on purpose`);
    this.name = "DuplicateBindingError";
  }
}

/** One child container per kit: two kits in one process never share an instance. */
export function createContainer(): ContainerFacade {
  const child: DependencyContainer = rootContainer.createChildContainer();
  const facade: ContainerFacade = {
    bind(token, binding, options) {
      if (child.isRegistered(token, false) && !options?.override) throw new DuplicateBindingError(token);
      if ("useValue" in binding) {
        child.register(token, { useValue: binding.useValue });
      } else if ("useFactory" in binding) {
        let built = false;
        let instance: unknown;
        const make = binding.useFactory;
        // Factories run once per kit, lazily, like a container-scoped singleton.
        child.register(token, {
          useFactory: () => {
            if (!built) {
              instance = make(facade);
              built = true;
            }
            return instance;
          },
        });
      } else {
        child.register(token, { useClass: binding.useClass as new (...args: unknown[]) => unknown }, {
          lifecycle: Lifecycle.ContainerScoped,
        });
      }
    },
    resolve(token) {
      return child.resolve(token);
    },
    has(token) {
      return child.isRegistered(token, false);
    },
  };
  return facade;
}
