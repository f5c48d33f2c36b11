"""A role on moto's IAM for vending tests, and the AssumeRole requests moto's STS received (its recorder).

moto enforces a role's own policy on its sessions but not the session policy a caller sends, so the tests
read what the service asked STS for from the recorder (started by the test with ``/moto-api/recorder``).
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs

import requests

from tests.support.s3 import REGION, S3Server

__all__ = ["assumable_role", "assume_role_requests"]


def assumable_role(s3_server: S3Server, role: str, bucket: str, external_id: str) -> str:
    """The ARN of a new role the tests' user may assume with ``external_id``, allowed everything on ``bucket`` only
    (which is made)."""
    import boto3

    iam = boto3.client("iam", endpoint_url=s3_server.endpoint, region_name=REGION,
                       aws_access_key_id=s3_server.access_key, aws_secret_access_key=s3_server.secret_key)
    user = iam.get_user(UserName="hms-catalog-tests")["User"]["Arn"]
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": user}, "Action": "sts:AssumeRole",
        "Condition": {"StringEquals": {"sts:ExternalId": external_id}}}]}
    arn: str = iam.create_role(RoleName=role, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    iam.put_role_policy(RoleName=role, PolicyName="the-bucket", PolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*",
                                               "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}))
    s3_server.bucket(bucket)
    return arn


def assume_role_requests(s3_server: S3Server, session_name: str) -> list[dict[str, str]]:
    """The AssumeRole requests moto received for ``session_name``, in order, as their form fields."""
    recorded = requests.get(f"{s3_server.endpoint}/moto-api/recorder/download-recording", timeout=60).text
    found = []
    for line in recorded.splitlines():
        call = json.loads(line) if line.strip() else {}
        body = str(call.get("body") or "")
        if call.get("body_encoded"):  # the recorder keeps bodies base64-encoded
            body = base64.b64decode(body).decode("utf-8", "replace")
        if body.startswith("Action=AssumeRole&"):
            sent = {key: values[0] for key, values in parse_qs(body).items()}
            if sent["RoleSessionName"] == session_name:
                found.append(sent)
    return found
