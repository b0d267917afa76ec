"""Which implementation answers each AWS service in the tests (issue 10).

LocalStack for everything it really offers, DynamoDB Local for DynamoDB, moto's
server for Glue only, each asked directly who it is. moto is taught the one call it
lacks that Terraform's in-place job updates make (glue:UpdateJob).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import localstack_client.session
import pytest
from glue_incremental import aws as aws_clients
from glue_incremental_tools import localendpoint

LOCALSTACK_CALLS = {
    "s3": lambda client: client.list_buckets(),
    "sqs": lambda client: client.list_queues(),
    "sns": lambda client: client.list_topics(),
    "cloudwatch": lambda client: client.list_metrics(),
    "events": lambda client: client.list_rules(),
    "iam": lambda client: client.list_roles(),
    "sts": lambda client: client.get_caller_identity(),
    "logs": lambda client: client.describe_log_groups(),
    "secretsmanager": lambda client: client.list_secrets(),
    "kms": lambda client: client.list_keys(),
}


@pytest.mark.parametrize("service", sorted(LOCALSTACK_CALLS))
def test_localstack_answers_for(aws, service):
    client = aws_clients.client(service)
    assert client.meta.endpoint_url == aws.localstack_url
    LOCALSTACK_CALLS[service](client)
    health = localendpoint.localstack_health(aws.localstack_url)
    assert health is not None and health["version"].startswith("2026.")
    # LocalStack marks a service "running" once it has served a request.
    assert health["services"][service] == "running"


def test_dynamodb_is_dynamodb_local(aws):
    client = aws_clients.client("dynamodb")
    assert client.meta.endpoint_url == aws.dynamodb_url != aws.localstack_url
    response = client.list_tables()
    assert response["ResponseMetadata"]["HTTPHeaders"]["server"].startswith("Jetty")
    assert aws.implementations()["dynamodb"].startswith("DynamoDB Local")
    assert localendpoint.localstack_health(aws.localstack_url)["services"]["dynamodb"] == "disabled"


def test_glue_is_moto_and_only_glue(aws):
    client = aws_clients.client("glue")
    assert client.meta.endpoint_url == aws.glue_url
    response = client.get_jobs()
    assert "Werkzeug" in response["ResponseMetadata"]["HTTPHeaders"]["server"]
    assert aws.implementations()["glue"].startswith("moto ")
    routed_to_moto = {
        name
        for name, value in aws.environment().items()
        if value == aws.glue_url and name.startswith("AWS_ENDPOINT_URL")
    }
    assert routed_to_moto == {"AWS_ENDPOINT_URL_GLUE"}


def test_moto_updates_a_job_in_place_replacing_its_definition_and_keeping_its_tags(aws):
    glue = aws_clients.client("glue")
    command = {"Name": "glueetl", "ScriptLocation": "s3://scripts/a.py"}
    glue.create_job(
        Name="updated", Role="role", Command=command, MaxRetries=1, Tags={"team": "data"}
    )

    glue.update_job(
        JobName="updated",
        JobUpdate={"Role": "role", "Command": command, "DefaultArguments": {"--a": "2"}},
    )

    job = glue.get_job(JobName="updated")["Job"]
    assert job["DefaultArguments"] == {"--a": "2"}
    assert job.get("MaxRetries", 0) == 0  # replaced, as Glue's UpdateJob does
    arn = f"arn:aws:glue:{glue.meta.region_name}:123456789012:job/updated"
    assert glue.get_tags(ResourceArn=arn)["Tags"] == {"team": "data"}
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_job(JobName="missing", JobUpdate={"Role": "role", "Command": command})
    glue.delete_job(JobName="updated")


def test_localstack_client_reaches_the_sessions_localstack(aws):
    sqs = localstack_client.session.Session().client("sqs")
    url = sqs.create_queue(QueueName="who-answers")["QueueUrl"]
    assert aws_clients.client("sqs").list_queues()["QueueUrls"] == [url]


def test_reset_leaves_every_service_empty(aws):
    aws_clients.client("s3").create_bucket(Bucket="reset-me")
    aws_clients.client("s3").put_object(Bucket="reset-me", Key="a/b.json", Body=b"{}")
    aws_clients.client("cloudwatch").put_metric_data(
        Namespace="GlueIncremental", MetricData=[{"MetricName": "RecordsRead", "Value": 1.0}]
    )
    aws_clients.client("secretsmanager").create_secret(Name="reset-me", SecretString="x")
    aws_clients.client("dynamodb").create_table(
        TableName="reset-me",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    aws_clients.client("glue").create_database(DatabaseInput={"Name": "reset_me"})
    key = aws_clients.client("kms").create_key()["KeyMetadata"]["KeyId"]
    aws_clients.client("kms").create_alias(AliasName="alias/reset-me", TargetKeyId=key)

    aws.reset()

    assert aws_clients.client("s3").list_buckets()["Buckets"] == []
    assert aws_clients.client("cloudwatch").list_metrics()["Metrics"] == []
    assert aws_clients.client("secretsmanager").list_secrets()["SecretList"] == []
    assert aws_clients.client("dynamodb").list_tables()["TableNames"] == []
    assert aws_clients.client("glue").get_databases()["DatabaseList"] == []
    aliases = aws_clients.client("kms").list_aliases()["Aliases"]
    assert [a["AliasName"] for a in aliases if not a["AliasName"].startswith("alias/aws/")] == []


def test_reset_drops_what_an_apply_left_in_another_region(aws):
    """The environments apply in eu-west-1; an alias left there refused the next apply."""
    import boto3

    kms = boto3.client(
        "kms",
        endpoint_url=aws.localstack_url,
        region_name="eu-west-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/gi-dev-table", TargetKeyId=key)

    aws.reset()

    aliases = [a["AliasName"] for a in kms.list_aliases()["Aliases"]]
    assert [name for name in aliases if not name.startswith("alias/aws/")] == []


def test_two_localstacks_on_one_machine_keep_separate_s3_storage(aws, tmp_path):
    """LocalStack spools S3 data under a fixed /tmp directory unless told otherwise: a
    second LocalStack (another pytest worker, ``make demo``) deleting a bucket of the
    same name removed this one's directory, and this one's DeleteBucket answered 500."""
    import boto3
    from botocore.config import Config

    other = localendpoint._LocalStack(
        localendpoint.project_root(), localendpoint.free_port(), tmp_path
    )
    other.start()
    try:
        other.wait_ready()
        no_retries = Config(retries={"total_max_attempts": 1})
        mine = aws_clients.client("s3")
        theirs = boto3.client(
            "s3", endpoint_url=other.url, region_name="us-east-1", config=no_retries
        )
        mine_once = boto3.client(
            "s3", endpoint_url=aws.localstack_url, region_name="us-east-1", config=no_retries
        )
        for s3 in (mine, theirs):
            s3.create_bucket(Bucket="gi-same-name")
            s3.put_object(Bucket="gi-same-name", Key="k", Body=b"kept")
        theirs.delete_object(Bucket="gi-same-name", Key="k")
        theirs.delete_bucket(Bucket="gi-same-name")
        assert mine.get_object(Bucket="gi-same-name", Key="k")["Body"].read() == b"kept"
        mine.delete_object(Bucket="gi-same-name", Key="k")
        mine_once.delete_bucket(Bucket="gi-same-name")
    finally:
        other.stop()


def test_cloudwatch_matches_a_dimension_value_whole_as_aws_does(aws):
    # Job names are often prefixes of each other: gi-local-orders, gi-local-orders-returns.
    cloudwatch = aws_clients.client("cloudwatch")
    now = datetime.now(UTC)
    for job, value in (("gi-local-orders-returns", 5.0), ("gi-local-orders", 1.0)):
        cloudwatch.put_metric_data(
            Namespace="Probe",
            MetricData=[
                {
                    "MetricName": "RecordsNew",
                    "Dimensions": [{"Name": "JobName", "Value": job}],
                    "Value": value,
                    "Timestamp": now,
                }
            ],
        )
    points = cloudwatch.get_metric_statistics(
        Namespace="Probe",
        MetricName="RecordsNew",
        Dimensions=[{"Name": "JobName", "Value": "gi-local-orders"}],
        StartTime=now - timedelta(minutes=5),
        EndTime=now + timedelta(minutes=1),
        Period=60,
        Statistics=["Sum", "SampleCount"],
    )["Datapoints"]
    assert [(point["Sum"], point["SampleCount"]) for point in points] == [(1.0, 1.0)]


def test_a_dynamodb_local_that_died_is_started_again_by_the_next_reset(aws):
    """One lost emulator fails the test it happened in, not every later test of the worker:
    the next reset starts another, and the store follows it through the environment."""
    import os

    from glue_incremental.watermarks import Watermarks, create_table

    before = aws.dynamodb_url
    aws._dynamodb.process.stop()

    with pytest.warns(UserWarning, match="DynamoDB Local at .* was gone"):
        aws.reset()

    assert aws.dynamodb_url != before
    assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == aws.dynamodb_url
    create_table()
    Watermarks().set("orders", why="after the restart", cursor=1)
    assert Watermarks().get_watermark("orders") is not None
    assert aws_clients.client("dynamodb").list_tables()["TableNames"] == ["glue-watermarks"]


def test_a_restart_that_times_out_still_leaves_the_session_on_the_new_server(aws, monkeypatch):
    """A restart whose wait for the new server fails has already moved the session to it: the
    next reset finds it running and nothing points at the port given up."""
    import os

    from glue_incremental_tools.localendpoint import LocalAwsError

    server = aws._dynamodb
    server.process.stop()

    def timed_out(self):
        raise LocalAwsError("dynamodb-local did not answer within 90 s")

    with monkeypatch.context() as patched:
        patched.setattr(type(server), "wait_ready", timed_out)
        with pytest.warns(UserWarning, match="was gone"), pytest.raises(LocalAwsError):
            aws.reset()
    server.wait_ready()  # it was only slow

    aws.reset()

    assert aws.dynamodb_url == server.url == os.environ["AWS_ENDPOINT_URL_DYNAMODB"]
    assert aws_clients.client("dynamodb").list_tables()["TableNames"] == []
