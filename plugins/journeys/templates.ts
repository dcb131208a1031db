import { DEFAULT_INTERACTED_WITHIN, DEFAULT_PACING, DEFAULT_WINDOW, type JourneyDefinition, type TriggerType } from "./definition.ts";

/**
 * The six journeys merchants expect, ready to install (`reachkit journeys
 * install`, or `POST /v1/journeys {"template": ...}`). Their texts use only
 * macros every person and product has, so none is skipped for a missing one.
 */
export const JOURNEY_TEMPLATES: Readonly<Record<TriggerType, JourneyDefinition>> = {
  back_in_stock: {
    name: "Back in stock",
    trigger: { type: "back_in_stock" },
    audience: {},
    steps: [{ type: "sms", text: "{productName} is back in stock at {companyName}! Get yours before it sells out again: {productLink}" }],
    exitOn: [],
    window: DEFAULT_WINDOW,
    pacing: { ...DEFAULT_PACING },
  },
  price_drop: {
    name: "Price drop",
    trigger: { type: "price_drop" },
    audience: { interactedWithin: DEFAULT_INTERACTED_WITHIN },
    steps: [{ type: "sms", text: "Price drop at {companyName}: {productName} is now {price}. {productLink}" }],
    exitOn: ["purchase"],
    window: DEFAULT_WINDOW,
  },
  low_inventory: {
    name: "Low inventory",
    trigger: { type: "low_inventory" },
    audience: { interactedWithin: DEFAULT_INTERACTED_WITHIN },
    steps: [{ type: "sms", text: "Almost gone: only a few {productName} left at {companyName}. {productLink}" }],
    exitOn: ["purchase"],
    window: DEFAULT_WINDOW,
  },
  cart_abandonment: {
    name: "Cart abandonment",
    trigger: { type: "cart_abandonment" },
    audience: {},
    steps: [
      { type: "wait", duration: "PT1H" },
      { type: "sms", text: "Still thinking it over? {productName} is waiting in your cart at {companyName}: {productLink}" },
    ],
    exitOn: ["purchase"],
    window: "P1D",
  },
  browse_abandonment: {
    name: "Browse abandonment",
    trigger: { type: "browse_abandonment" },
    audience: {},
    steps: [
      { type: "wait", duration: "PT4H" },
      { type: "sms", text: "{productName} caught your eye? Take another look at {companyName}: {productLink}" },
    ],
    exitOn: ["purchase"],
    window: DEFAULT_WINDOW,
  },
  welcome: {
    name: "Welcome",
    trigger: { type: "welcome" },
    audience: {},
    steps: [
      { type: "wait", duration: "PT1H" },
      { type: "sms", text: "Thanks for joining {companyName} texts! You will hear about new arrivals, restocks and sales first." },
    ],
    exitOn: [],
    window: "P30D",
  },
};

export const TEMPLATE_NAMES = Object.keys(JOURNEY_TEMPLATES) as TriggerType[];
