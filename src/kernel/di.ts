// The one place that imports tsyringe's decorators, after the metadata polyfill they need.
import "reflect-metadata";

export { inject, injectable } from "tsyringe";
